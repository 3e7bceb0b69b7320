import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// Values at the edges of what a record holds: nothing, many megabytes, and one byte over the
/// 2 GiB limit (refused before a byte of it is read).
@Suite("Huge and empty values")
struct HugeValueTests {
  @Test("a value of 2 GiB + 1 byte throws valueTooLarge from put and from a batch, and writes nothing")
  func overLimit() throws {
    try withStore(options: CaskStore.Options(durability: .never), label: "huge-value") { store, path throws in
      try store.put(Data("kept".utf8), forKey: "existing")
      let before = try DamageFixture.snapshot(path)

      // An untouched anonymous mapping: 2 GiB of address space, no memory, unless something reads it.
      let length = CaskFormat.maximumValueLength + 1
      let mapping = try #require(
        mmap(nil, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0).flatMap {
          $0 == MAP_FAILED ? nil : $0
        })
      let huge = Data(bytesNoCopy: mapping, count: length, deallocator: .unmap)
      let expected = CaskError.valueTooLarge(length: length, maximum: CaskFormat.maximumValueLength)
      #expect(throws: expected) { try store.put(huge, forKey: "huge") }
      #expect(throws: expected) {
        try store.batch { batch in
          try batch.put(Data("small".utf8), forKey: "small")
          try batch.put(huge, forKey: "huge")
        }
      }
      #expect(try DamageFixture.snapshot(path) == before)
      #expect(try store.keys() == ["existing"])
    }
  }

  @Test("an empty value and a 24 MiB value round-trip through reopen (scan and hint) and compaction")
  func largeAndEmpty() throws {
    try withTemporaryDirectory("large-value") { directory throws in
      let path = directory.file("store.cask")
      // Segments far smaller than the value: it gets a segment of its own, past the limit.
      let options = CaskStore.Options(durability: .never, segmentSizeLimit: 1 << 20, autoCompaction: nil)
      var random = SeededRandom.make(test: "large-value")
      let large = random.bytes(24 << 20)
      var store = try CaskStore(path: path, password: "pw", options: options)
      try store.put(Data(), forKey: "empty")
      try store.put(large, forKey: "large")
      try store.put(Data("after".utf8), forKey: "after")
      #expect(try store.get("empty") == Data())
      #expect(try store.get("large") == large)
      try store.close()
      for step in 0..<3 {
        store = try CaskStore(path: path, password: "pw", options: options)
        #expect(try store.get("empty") == Data(), "step \(step)")
        #expect(try store.get("large") == large, "step \(step)")
        #expect(try store.get("after") == Data("after".utf8), "step \(step)")
        #expect(try store.verify().isClean, "step \(step)")
        if step == 1 { try store.compact() }
        try store.close()
      }
    }
  }
}

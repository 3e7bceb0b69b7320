import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

@Suite("Keys outside 1...65,535 UTF-8 bytes are refused before anything is written")
struct InvalidKeyTests {
  private let options = CaskStore.Options(durability: .never, segmentSizeLimit: 256 << 10, autoCompaction: nil)

  /// 65,536 UTF-8 bytes in 32,768 characters: the limit counts bytes, not characters.
  private static let tooLongMultibyte = String(repeating: "\u{E9}", count: 32_768)
  private static let tooLongASCII = String(repeating: "k", count: CaskFormat.maximumKeyLength + 1)
  /// Exactly 65,535 UTF-8 bytes.
  private static let longestASCII = String(repeating: "k", count: CaskFormat.maximumKeyLength)
  private static let longestMultibyte = String(repeating: "\u{E9}", count: 32_767) + "x"

  @Test("an empty key and keys of 65,536 UTF-8 bytes throw invalidKey from every write, and write nothing")
  func refused() throws {
    try withStore(options: options, label: "invalid-key") { store, path throws in
      try store.put(Data("kept".utf8), forKey: "existing")
      let before = try DamageFixture.snapshot(path)
      #expect(Self.tooLongMultibyte.utf8.count == 65_536)
      for key in ["", Self.tooLongASCII, Self.tooLongMultibyte] {
        Self.expectInvalidKey { try store.put(Data("v".utf8), forKey: key) }
        Self.expectInvalidKey { try store.delete(key) }
        Self.expectInvalidKey {
          try store.batch { batch in
            try batch.put(Data("good".utf8), forKey: "good")
            try batch.put(Data("v".utf8), forKey: key)
          }
        }
        Self.expectInvalidKey {
          try store.batch { batch in
            try batch.put(Data("good".utf8), forKey: "good")
            try batch.delete(key)
          }
        }
      }
      #expect(try DamageFixture.snapshot(path) == before)
      #expect(try store.keys() == ["existing"])
      #expect(try store.get("good") == nil)
    }
  }

  private static func expectInvalidKey(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
  ) {
    let error = #expect(throws: CaskError.self, sourceLocation: sourceLocation) { try body() }
    if let error, !Self.isInvalidKey(error) {
      Issue.record("expected invalidKey, got \(error)", sourceLocation: sourceLocation)
    }
  }

  private static func isInvalidKey(_ error: CaskError) -> Bool {
    if case .invalidKey = error { return true }
    return false
  }

  @Test("keys of exactly 65,535 UTF-8 bytes work through hints, scans and compaction")
  func longestKeysWork() throws {
    try withTemporaryDirectory("longest-key") { directory throws in
      let path = directory.file("store.cask")
      #expect(Self.longestMultibyte.utf8.count == CaskFormat.maximumKeyLength)
      let values = [Self.longestASCII: Data("ascii".utf8), Self.longestMultibyte: Data()]
      var store = try CaskStore(path: path, password: "pw", options: options)
      for (key, value) in values { try store.put(value, forKey: key) }
      try store.batch { batch in
        try batch.put(Data("batched".utf8), forKey: Self.longestASCII)
        try batch.put(Data("short".utf8), forKey: "short")
      }
      var expected = values
      expected[Self.longestASCII] = Data("batched".utf8)
      expected["short"] = Data("short".utf8)

      func expectContents(_ store: CaskStore, _ moment: String) throws {
        #expect(store.count == expected.count, "\(moment)")
        for (key, value) in expected { #expect(try store.get(key) == value, "\(moment)") }
        #expect(Set(try store.keys(withPrefix: "kkkk")) == [Self.longestASCII], "\(moment)")
      }
      try expectContents(store, "after writing")
      try store.close()
      store = try CaskStore(path: path, password: "pw", options: options)
      #expect(store.stats().recovery.segmentsFromHints == store.stats().segments)
      try expectContents(store, "from the hint")
      try store.close()
      for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".hint") {
        try FileManager.default.removeItem(atPath: "\(path)/\(name)")
      }
      store = try CaskStore(path: path, password: "pw", options: options)
      #expect(store.stats().recovery.segmentsScanned == store.stats().segments)
      try expectContents(store, "from a scan")
      try #require(try store.compact() != nil)
      try expectContents(store, "after compaction")
      #expect(try store.delete(Self.longestMultibyte))
      expected[Self.longestMultibyte] = nil
      #expect(try store.verify().isClean)
      try store.close()
      store = try CaskStore(path: path, password: "pw", options: options)
      try expectContents(store, "after compaction and reopen")
      try store.close()
    }
  }
}

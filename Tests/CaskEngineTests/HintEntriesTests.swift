import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A sealed segment's hint is built from the index and the segment's tombstones, packed
/// (`HintEntries`) rather than as an entry with a `String` per key, and sorted by offset
/// before it is written: open applies the entries in the order they are listed.
@Suite("Packed hint entries")
struct HintEntriesTests {
  /// A key of 1 to 40 bytes, some in a group, some with characters of several bytes.
  private static func randomKey(_ random: inout SeededRandom) -> String {
    let length = Int(random.next() % 40) + 1
    let alphabet = Array("abcdefghij0123456789é✓") + ["\u{0}"]
    let text = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
    return text.hasPrefix("\u{0}") ? "k" + text : text
  }

  @Test("sorting by offset keeps every entry whole, and sealing and opening gives the same entries back")
  func sortingAndSealingKeepEntries() throws {
    var random = SeededRandom.make(test: "HintEntriesTests.sortingAndSealingKeepEntries")
    let cipher = try withTemporaryDirectory("hint-entries") { directory throws in
      let store = try CaskStore(path: directory.file("store.cask"), password: testPassword, options: testStoreOptions)
      defer { try? store.close() }
      return store.cipher
    }
    for run in 0..<testIterations(20) {
      let count = [0, 1, 2, 50, 700][run % 5]
      var offsets = Set<UInt32>()
      while offsets.count < count { offsets.insert(UInt32(random.next() % 1_000_000) + 32) }
      let entries = offsets.shuffled(using: &random).map { offset in
        HintEntry(
          isDelete: random.next() % 4 == 0, offset: offset, length: UInt32(random.next() % 5000) + 24,
          key: Self.randomKey(&random))
      }
      let sorted = HintEntries(entries).sortedByOffset().list
      let expected = entries.sorted { $0.offset < $1.offset }
      #expect(sorted.map(\.offset) == expected.map(\.offset), "run \(run)")
      #expect(sorted.map(\.key) == expected.map(\.key), "run \(run)")
      #expect(sorted.map(\.length) == expected.map(\.length), "run \(run)")
      #expect(sorted.map(\.isDelete) == expected.map(\.isDelete), "run \(run)")

      let hint = HintFile(segmentID: 7, segmentLength: 2_000_000, maxSequence: 99, entries: expected)
      let decoded = try HintFile.decode(Data(hint.encoded(cipher: cipher)), cipher: cipher, path: "hint")
      let read = decoded.entries.list
      #expect(read.map(\.key) == expected.map(\.key), "run \(run)")
      #expect(read.map(\.offset) == expected.map(\.offset), "run \(run)")
      #expect(decoded.entries.keyByteCount == expected.reduce(0) { $0 + $1.key.utf8.count })
    }
  }

  @Test("a key deleted and put again, or put and deleted, within one segment opens from its hint as it was left")
  func deletesAndPutsWithinASegmentOpenFromTheHint() throws {
    var random = SeededRandom.make(test: "HintEntriesTests.deletesAndPutsWithinASegmentOpenFromTheHint")
    var options = testStoreOptions
    options.segmentSizeLimit = 16 << 10
    try withTemporaryDirectory("hint-entries") { directory throws in
      let path = directory.file("store.cask")
      var model: [String: Data] = [:]
      let store = try CaskStore(path: path, password: testPassword, options: options)
      for step in 0..<3_000 {
        let key = "key-\(random.next() % 60)"
        let grouped = random.next() % 3 == 0 ? "group\u{0}" + key : key
        if random.next() % 3 == 0 {
          try store.delete(grouped)
          model[grouped] = nil
        } else {
          let value = Data("value \(step)".utf8)
          try store.put(value, forKey: grouped)
          model[grouped] = value
        }
      }
      try store.close()
      let reopened = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      defer { try? reopened.close() }
      let recovery = reopened.stats().recovery
      #expect(recovery.segmentsScanned == 0)
      #expect(recovery.segmentsFromHints > 3)
      #expect(reopened.count == model.count)
      for (key, value) in model { #expect(try reopened.get(key) == value, "key \(key.debugDescription)") }
    }
  }
}

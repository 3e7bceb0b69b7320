import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A hint of a segment whose records carry attached keys writes each group name once, in a
/// table, and its entries' sections name groups by number ("CCHINTS3", Docs/FORMAT.md
/// section 6); it reads back the sections as the records hold them, and a hint written before,
/// with its sections whole ("CCHINTS2"), reads the same.
@Suite("Hint: group names written once")
struct HintGroupNamesTests {
  static func cipher() throws -> RecordCipher {
    try withTemporaryDirectory("hint-names") { directory throws in
      let store = try CaskStore(path: directory.file("store.cask"), password: testPassword, options: testStoreOptions)
      defer { try? store.close() }
      return store.cipher
    }
  }

  /// Entries of objects with entries in a few index groups, some puts without any, a delete.
  static func entries(_ random: inout SeededRandom, count: Int) throws -> [HintEntry] {
    let groups = (0..<5).map { "\u{1}cask.index\u{1}index\($0)\u{1}0123456789abcdef\u{1}events" }
    var entries: [HintEntry] = []
    for index in 0..<count {
      let owner = "events\u{0}e\(index)"
      let offset = UInt32(32 + index * 500)
      if index % 7 == 3 {
        entries.append(HintEntry(isDelete: true, offset: offset, length: 200, key: owner))
        continue
      }
      var keys: [String] = []
      for group in groups where random.next() % 4 != 0 {
        for _ in 0..<(1 + random.next() % 3) { keys.append("\(group)\u{0}text-\(random.next() % 30)\u{0}e\(index)") }
      }
      let section = try AttachedKeys.encode(keys, owner: owner) ?? []
      entries.append(HintEntry(isDelete: false, offset: offset, length: 400, key: owner, attached: section))
    }
    return entries
  }

  @Test(
    "a hint names each group once, is shorter than one spelling them once names repeat, and both read back every section"
  )
  func namedHintReadsBackTheSections() throws {
    var random = SeededRandom.make(test: "HintGroupNamesTests.namedHintReadsBackTheSections")
    let cipher = try Self.cipher()
    for run in 0..<testIterations(5) {
      let count = [2, 10, 300][run % 3]
      let expected = try Self.entries(&random, count: count)
      let hint = HintFile(segmentID: 3, segmentLength: 1_000_000, maxSequence: 9, entries: expected)
      let named = try hint.encoded(cipher: cipher)
      let whole = try hint.encoded(cipher: cipher, namingGroups: false)
      #expect(Array(named.prefix(8)) == CaskFormat.hintMagicNamed, "run \(run)")
      #expect(Array(whole.prefix(8)) == CaskFormat.hintMagicGrouped, "run \(run)")
      // The table pays for itself once names repeat; two entries may name each group once, and
      // their hint is then a few bytes longer than the whole form.
      if count >= 10 {
        #expect(named.count < whole.count, "run \(run): \(named.count) bytes named, \(whole.count) whole")
      }
      for bytes in [named, whole] {
        let read = try HintFile.decode(Data(bytes), cipher: cipher, path: "hint").entries.list
        #expect(read.map(\.key) == expected.map(\.key), "run \(run)")
        #expect(read.map(\.attached) == expected.map(\.attached), "run \(run)")
        #expect(read.map(\.isDelete) == expected.map(\.isDelete), "run \(run)")
      }
    }
  }

  @Test("a hint without attachment sections is written as before")
  func noSectionsNoTable() throws {
    let cipher = try Self.cipher()
    let entries = [HintEntry(isDelete: false, offset: 32, length: 100, key: "events\u{0}e1")]
    let bytes = try HintFile(segmentID: 3, segmentLength: 1_000, maxSequence: 1, entries: entries).encoded(
      cipher: cipher)
    #expect(Array(bytes.prefix(8)) == CaskFormat.hintMagicGrouped)
  }

  @Test("a section naming a group past the table, or cut inside a group, is refused")
  func groupNumberPastTheTable() throws {
    let cipher = try Self.cipher()
    let owner = Array("events\u{0}e1".utf8)
    func hint(_ section: [UInt8], names: Int) throws -> Data {
      var payload = ByteWriter()
      payload.appendHintHead(cipher: cipher, segmentID: 3, segmentLength: 1_000, maxSequence: 1, count: 1)
      HintSizes().appendSection(to: &payload, tagLength: cipher.tagLength)
      payload.append(UInt16(names))
      for number in 0..<names {
        payload.append(UInt16(3))
        payload.append(contentsOf: Array("g\(number)x".utf8.prefix(3)))
      }
      payload.append(CaskFormat.hintEntryTypeAttached)
      payload.append(UInt8(0))
      payload.append(UInt16(owner.count))
      payload.append(UInt32(32))
      payload.append(UInt32(100))
      payload.append(contentsOf: owner)
      payload.append(UInt32(section.count))
      payload.append(contentsOf: section)
      return Data(CaskFormat.hintMagicNamed) + (try cipher.seal(Data(payload.bytes)))
    }
    // One group, number 0, one text "t": well formed with one name in the table.
    let section: [UInt8] = [1, 0, 0, 0, 1, 0, 1, 0, UInt8(ascii: "t")]
    let read = try HintFile.decode(try hint(section, names: 1), cipher: cipher, path: "hint").entries.list
    #expect(read.first?.attached == [1, 0, 3, 0] + Array("g0x".utf8) + [1, 0, 1, 0, UInt8(ascii: "t")])
    #expect(throws: CaskError.self) { try HintFile.decode(try hint(section, names: 0), cipher: cipher, path: "hint") }
    #expect(throws: CaskError.self) {
      try HintFile.decode(try hint(Array(section.dropLast()), names: 1), cipher: cipher, path: "hint")
    }
  }
}

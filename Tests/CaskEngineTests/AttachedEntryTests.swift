import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A commit hook may give a put's attached keys as their groups and texts
/// (`CommitAdditions.entries`) instead of whole keys: the engine spells each with the owner's
/// id, checks it as it checks a whole key, and attaches the same set.
@Suite("Attached keys given as groups and texts")
struct AttachedEntryTests {
  typealias Fixture = AttachedKeyFixture

  /// Opens the store at `path` with a hook that gives a put of `obj U+0000 id` the entries its
  /// value lists (`group|text`, comma-separated), and a put of `own U+0000 id` the one entry
  /// (`obj`, `t`), which spells `obj U+0000 t U+0000 id`: a key that may own a record too.
  static func open(_ path: String, keys: RNCryptor.Keys, options: CaskStore.Options = Fixture.options) throws
    -> CaskStore
  {
    let store = try CaskStore(path: path, keys: keys, options: options)
    store.extensions.setCommitHook { writes in
      var additions = CommitAdditions()
      for write in writes {
        guard let value = write.value else { continue }
        if write.key.hasPrefix("own\u{0}") {
          additions.entries.append((write.key, [AttachedEntry(group: "obj", text: "t")]))
          continue
        }
        guard write.key.hasPrefix("obj\u{0}") else { continue }
        let entries = String(decoding: value, as: UTF8.self).split(separator: ",").map { part in
          let pieces = part.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
          return AttachedEntry(group: String(pieces[0]), text: pieces.count > 1 ? String(pieces[1]) : "")
        }
        if !entries.isEmpty { additions.entries.append((write.key, entries)) }
      }
      return additions
    }
    return store
  }

  @Test("entries attach the keys their groups, texts and the owner's id spell, in the owner's one record")
  func entriesAttachTheirKeys() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      let store = try Self.open(path, keys: keys)
      try store.put(Data("\u{1}idx|b,\u{1}idx|a,\u{1}idy|c,\u{1}idx|a".utf8), forKey: "obj\u{0}7")
      let attached = ["\u{1}idx\u{0}a\u{0}7", "\u{1}idx\u{0}b\u{0}7", "\u{1}idy\u{0}c\u{0}7"]
      #expect(try store.keys().sorted() == (attached + ["obj\u{0}7"]).sorted())
      for key in attached { #expect(try store.get(key) == Data()) }
      let report = try store.verify()
      #expect(report.isClean)
      #expect(report.recordsChecked == 1)
      try store.close()
      try Fixture.removeHintsAndCheckpoint(path)
      let scanned = try Self.open(path, keys: keys)
      #expect(try scanned.keys().sorted() == (attached + ["obj\u{0}7"]).sorted())
      try scanned.close()
    }
  }

  @Test("keys and entries given for one owner make one section, the same as the whole keys make")
  func keysAndEntriesMakeOneSection() throws {
    let owner = "obj\u{0}9"
    let whole = ["\u{1}g\u{0}t\u{0}9", "\u{1}g\u{0}u\u{0}9", "\u{1}h\u{0}\u{0}9"]
    let mixed = try AttachedKeys.encode(
      [whole[1]], entries: [AttachedEntry(group: "\u{1}h", text: ""), AttachedEntry(group: "\u{1}g", text: "t")],
      owner: owner)
    #expect(mixed != nil)
    #expect(mixed == (try AttachedKeys.encode(whole, owner: owner)))
    // Entries alone, out of order and one twice: the same section.
    let entries = [
      AttachedEntry(group: "\u{1}h", text: ""), AttachedEntry(group: "\u{1}g", text: "u"),
      AttachedEntry(group: "\u{1}g", text: "t"), AttachedEntry(group: "\u{1}g", text: "u"),
    ]
    #expect((try AttachedKeys.encode([], entries: entries, owner: owner)) == mixed)
  }

  @Test("entries make the section's bytes: groups, then each group's texts, in byte order, each once")
  func entriesSectionBytes() throws {
    let entries = [
      AttachedEntry(group: "\u{1}b", text: "é"), AttachedEntry(group: "\u{1}a", text: "xy"),
      AttachedEntry(group: "\u{1}a", text: "x"), AttachedEntry(group: "\u{1}b", text: "é"),
    ]
    let section = try AttachedKeys.encode([], entries: entries, owner: "obj\u{0}9")
    let expected: [UInt8] = [
      2, 0,  // groups
      2, 0, 1, 0x61, 2, 0, 1, 0, 0x78, 2, 0, 0x78, 0x79,  // "\u{1}a": "x", "xy"
      2, 0, 1, 0x62, 1, 0, 2, 0, 0xC3, 0xA9,  // "\u{1}b": "é" once
    ]
    #expect(section == expected)
  }

  @Test("entries in any order and repeated, few or many, make the section their whole keys make")
  func entriesInAnyOrderMakeTheKeysSection() throws {
    var random = SeededRandom.make(test: "entriesInAnyOrderMakeTheKeysSection")
    let owner = "obj\u{0}42"
    for _ in 0..<testIterations(200) {
      // Up to 20 entries: a save's handful and more, over few groups and texts, so that
      // groups, texts and whole entries repeat.
      let count = Int.random(in: 1...20, using: &random)
      let entries = (0..<count).map { _ in
        AttachedEntry(
          group: "\u{1}g\(Int.random(in: 0..<3, using: &random))",
          text: String(repeating: "t", count: Int.random(in: 0...3, using: &random)))
      }
      let whole = Set(entries.map { $0.group + "\u{0}" + $0.text + "\u{0}42" }).sorted()
      let expected = try AttachedKeys.encode(whole, owner: owner)
      #expect((try AttachedKeys.encode([], entries: entries, owner: owner)) == expected)
      #expect((try AttachedKeys.encode([], entries: entries.shuffled(using: &random), owner: owner)) == expected)
    }
  }

  @Test("an entry holding U+0000, one without a group, or one spelling a key over the limit fails the put")
  func malformedEntriesAreRefused() throws {
    try withTemporaryDirectory { directory in
      let store = try Self.open(directory.file("store"), keys: try RNCryptor.Keys.random())
      defer { try? store.close() }
      let tooLong = String(repeating: "x", count: CaskFormat.maximumKeyLength)
      for value in ["\u{1}idx|a\u{0}b", "\u{1}i\u{0}x|a", "|a", "\u{1}idx|\(tooLong)"] {
        #expect(throws: CaskError.self) { try store.put(Data(value.utf8), forKey: "obj\u{0}1") }
      }
      #expect(try store.keys().isEmpty)
    }
  }

  @Test("a store before version 5 writes each entry as a put of an empty value of its own")
  func entriesBeforeVersionFiveArePuts() throws {
    try withTemporaryDirectory { directory in
      var options = Fixture.options
      options.newStoreFormatVersion = 3
      let store = try Self.open(directory.file("store"), keys: try RNCryptor.Keys.random(), options: options)
      defer { try? store.close() }
      try store.put(Data("\u{1}idx|a,\u{1}idy|c".utf8), forKey: "obj\u{0}7")
      #expect(try store.get("\u{1}idx\u{0}a\u{0}7") == Data())
      #expect(try store.get("\u{1}idy\u{0}c\u{0}7") == Data())
      #expect(try store.verify().recordsChecked == 3)
    }
  }

  @Test("a key attached to a record drops the keys its own record attached, also when reopened from hints")
  func attachedOwnerLosesItsKeys() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      let store = try Self.open(path, keys: keys)
      // `obj U+0000 t U+0000 9` owns a record attaching one key, then `own U+0000 9` attaches it.
      try store.put(Data("\u{1}idx|a".utf8), forKey: "obj\u{0}t\u{0}9")
      #expect(try store.contains("\u{1}idx\u{0}a\u{0}t\u{0}9"))
      try store.put(Data("o".utf8), forKey: "own\u{0}9")
      let expected = ["obj\u{0}t\u{0}9", "own\u{0}9"]
      #expect(try store.keys().sorted() == expected)
      #expect(try store.get("obj\u{0}t\u{0}9") == Data())
      #expect(try store.verify().isClean)
      try store.close()
      for removesHints in [false, true] {
        try? FileManager.default.removeItem(atPath: "\(path)/\(CaskFormat.checkpointFileName)")
        if removesHints { try Fixture.removeHintsAndCheckpoint(path) }
        let reopened = try Self.open(path, keys: keys)
        #expect(try reopened.keys().sorted() == expected)
        try reopened.close()
      }
    }
  }
}

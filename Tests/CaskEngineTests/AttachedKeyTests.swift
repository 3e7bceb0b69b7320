import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A version 5 put carries its attached keys in its own key message (Docs/FORMAT.md, "Version
/// 5: attached keys"): one record per write, and the same directory from a scan, from hints,
/// from a checkpoint and after compaction or a rekeyed copy.
@Suite("Attached keys of format version 5")
struct AttachedKeyTests {
  typealias Fixture = AttachedKeyFixture

  /// Writes objects, overwrites some with other texts, deletes one; returns the model.
  static func fill(_ store: CaskStore) throws -> AttachedKeyModel {
    var model = AttachedKeyModel()
    let writes: [(String, String?)] = [
      ("1", "lisbon,porto,xa"), ("2", "lisbon"), ("3", "faro,xb"), ("1", "porto,xc"), ("2", nil), ("4", ""),
      ("3", "faro,xb,braga"),
    ]
    for (id, texts) in writes {
      let key = Fixture.objectKey(id)
      if let texts {
        try store.put(Data(texts.utf8), forKey: key)
        model.put(Data(texts.utf8), forKey: key)
      } else {
        try store.delete(key)
        model.delete(key)
      }
    }
    return model
  }

  @Test("a put with three attached keys appends one record, and each attached key reads as an empty value")
  func onePutIsOneRecord() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      let store = try Fixture.open(path, keys: keys)
      try store.put(Data("a,b,xc".utf8), forKey: Fixture.objectKey("7"))
      #expect(try store.keys().count == 4)
      #expect(try store.get(Fixture.entryKey("b", "7")) == Data())
      #expect(
        try store.unsortedKeys(inGroup: "\u{1}idx").sorted() == [
          Fixture.entryKey("a", "7"), Fixture.entryKey("b", "7"),
        ])
      let report = try store.verify()
      #expect(report.isClean)
      #expect(report.recordsChecked == 1)
      // Attached keys have no bytes of their own: every live byte is the one record's.
      let stats = store.stats()
      #expect(stats.keys == 4)
      try store.close()
    }
  }

  @Test("reopening by hints, by a scan and from a checkpoint gives the directory the writes made")
  func reopenGivesTheSameDirectory() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      var options = Fixture.options
      options.checkpoints = CaskStore.Checkpoints(minimumKeys: 1)
      let store = try Fixture.open(path, keys: keys, options: options)
      let model = try Self.fill(store)
      #expect(try Fixture.contents(store) == model.values)
      try store.close()
      let fromCheckpoint = try Fixture.open(path, keys: keys, options: options)
      #expect(fromCheckpoint.stats().recovery.segmentsFromCheckpoint > 0)
      #expect(try Fixture.contents(fromCheckpoint) == model.values)
      try fromCheckpoint.close()
      try FileManager.default.removeItem(atPath: "\(path)/\(CaskFormat.checkpointFileName)")
      let fromHints = try Fixture.open(path, keys: keys)
      #expect(fromHints.stats().recovery.segmentsFromHints > 0)
      #expect(try Fixture.contents(fromHints) == model.values)
      try fromHints.close()
      try Fixture.removeHintsAndCheckpoint(path)
      let scanned = try Fixture.open(path, keys: keys)
      #expect(scanned.stats().recovery.segmentsScanned > 0)
      #expect(try Fixture.contents(scanned) == model.values)
      #expect(try scanned.verify().isClean)
      try scanned.close()
    }
  }

  @Test("an overwrite across segments drops the keys the old record attached, also when reopened from hints")
  func overwriteInALaterSegmentDropsTheOldSet() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      var options = Fixture.options
      options.segmentSizeLimit = 4096
      let store = try Fixture.open(path, keys: keys, options: options)
      var model = AttachedKeyModel()
      for round in 0..<6 {
        for id in 0..<8 {
          let value = Data("t\(round),u\(id),x\(round % 2)".utf8)
          try store.put(value, forKey: Fixture.objectKey("\(id)"))
          model.put(value, forKey: Fixture.objectKey("\(id)"))
        }
      }
      try store.delete(Fixture.objectKey("3"))
      model.delete(Fixture.objectKey("3"))
      #expect(try Fixture.segmentNames(path).count > 2)
      #expect(try Fixture.contents(store) == model.values)
      try store.close()
      let reopened = try Fixture.open(path, keys: keys, options: options)
      #expect(try Fixture.contents(reopened) == model.values)
      #expect(try reopened.verify().isClean)
      try reopened.close()
    }
  }

  @Test("compaction and a rekeyed copy keep the attached keys, and the copy attaches them again")
  func compactionAndRekeyKeepThem() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      let store = try Fixture.open(path, keys: keys)
      let model = try Self.fill(store)
      let report = try #require(try store.compact())
      // The live objects only, attached keys inside them: three records.
      #expect(report.recordsCopied == 3)
      #expect(try Fixture.contents(store) == model.values)
      #expect(try store.verify().isClean)
      let copyPath = directory.file("copy")
      let copyKeys = try RNCryptor.Keys.random()
      try store.rekeyedCopy(to: copyPath, keys: copyKeys)
      try store.close()
      let reopened = try Fixture.open(path, keys: keys)
      #expect(try Fixture.contents(reopened) == model.values)
      try reopened.close()
      let copy = try CaskStore(path: copyPath, keys: copyKeys, options: Fixture.options)
      #expect(try Fixture.contents(copy) == model.values)
      let verified = try copy.verify()
      #expect(verified.isClean)
      #expect(verified.recordsChecked == 3)
      try copy.close()
    }
  }

  @Test("a key written on its own over an attached one, then deleted, stays deleted through compaction")
  func aSeparateDeleteOfAnAttachedKeyHolds() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      let store = try Fixture.open(path, keys: keys)
      var model = AttachedKeyModel()
      try store.put(Data("a,b".utf8), forKey: Fixture.objectKey("1"))
      model.put(Data("a,b".utf8), forKey: Fixture.objectKey("1"))
      try store.delete(Fixture.entryKey("a", "1"))
      model.delete(Fixture.entryKey("a", "1"))
      try store.put(Data("own".utf8), forKey: Fixture.entryKey("b", "1"))
      model.put(Data("own".utf8), forKey: Fixture.entryKey("b", "1"))
      _ = try store.compact()
      #expect(try Fixture.contents(store) == model.values)
      try store.close()
      try Fixture.removeHintsAndCheckpoint(path)
      let reopened = try Fixture.open(path, keys: keys)
      #expect(try Fixture.contents(reopened) == model.values)
      try reopened.close()
    }
  }

  /// A store of 1 KiB segments whose first segment holds the entry `a` of object 1 written on
  /// its own, and whose second, newer segment has begun.
  private static func entryInAnOlderSegment(_ directory: TemporaryDirectory) throws -> (
    path: String, keys: RNCryptor.Keys, options: CaskStore.Options, store: CaskStore
  ) {
    let path = directory.file("store")
    let keys = try RNCryptor.Keys.random()
    var options = Fixture.options
    options.segmentSizeLimit = 1024
    let store = try Fixture.open(path, keys: keys, options: options)
    try store.put(Data(), forKey: Fixture.entryKey("a", "1"))
    var filler = 0
    while try Fixture.segmentNames(path).count < 2 {
      try store.put(Data("filler".utf8), forKey: "f\(filler)")
      filler += 1
    }
    return (path, keys, options, store)
  }

  @Test(
    "a key written on its own, attached by a record its owner then replaced in the same segment, stays gone when reopened from hints"
  )
  func keyDroppedByAnOverwrittenRecordStaysGone() throws {
    try withTemporaryDirectory { directory in
      let (path, keys, options, store) = try Self.entryInAnOlderSegment(directory)
      let entry = Fixture.entryKey("a", "1")
      // Both in the newer segment: its hint lists only the last of the two.
      try store.put(Data("a".utf8), forKey: Fixture.objectKey("1"))
      try store.put(Data("b".utf8), forKey: Fixture.objectKey("1"))
      #expect(try !store.contains(entry))
      try store.close()
      try? FileManager.default.removeItem(atPath: "\(path)/\(CaskFormat.checkpointFileName)")
      let reopened = try Fixture.open(path, keys: keys, options: options)
      #expect(reopened.stats().recovery.segmentsFromHints >= 2)
      #expect(try !reopened.contains(entry))
      #expect(try reopened.contains(Fixture.entryKey("b", "1")))
      try reopened.close()
    }
  }

  @Test(
    "a key taken over and dropped by records of the last segment stays gone when that segment, scanned at open, grows and is reopened from hints"
  )
  func keyDroppedBeforeAScanStaysGone() throws {
    try withTemporaryDirectory { directory in
      let (path, keys, options, store) = try Self.entryInAnOlderSegment(directory)
      let entry = Fixture.entryKey("a", "1")
      // In the newer segment: the owner takes the key over, then its delete drops it.
      try store.put(Data("a".utf8), forKey: Fixture.objectKey("1"))
      try store.delete(Fixture.objectKey("1"))
      try store.close()
      try Fixture.removeHintsAndCheckpoint(path)
      let scanned = try Fixture.open(path, keys: keys, options: options)
      #expect(try !scanned.contains(entry))
      // The scanned segment grows; its hint, written at close, leaves out both records above.
      try scanned.put(Data("b".utf8), forKey: Fixture.objectKey("1"))
      #expect(try Fixture.segmentNames(path).count == 2)
      try scanned.close()
      try? FileManager.default.removeItem(atPath: "\(path)/\(CaskFormat.checkpointFileName)")
      let reopened = try Fixture.open(path, keys: keys, options: options)
      #expect(reopened.stats().recovery.segmentsFromHints == 2)
      #expect(try !reopened.contains(entry))
      #expect(try reopened.contains(Fixture.entryKey("b", "1")))
      try reopened.close()
    }
  }

  @Test("a byte changed in a record's attached keys makes its batch unusable, reported, and verify says so")
  func tamperedAttachmentIsRefused() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      let store = try Fixture.open(path, keys: keys)
      try store.put(Data("a,b".utf8), forKey: Fixture.objectKey("1"))
      try store.close()
      let segment = "\(path)/\(try #require(try Fixture.segmentNames(path).first))"
      var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)))
      let start = FileDamage.recordsStart(ofSegment: bytes)
      let keyLength = Int(bytes.withUnsafeBytes { loadLittleEndian($0, at: start + 16, as: UInt32.self) })
      // The last block of ciphertext before the HMAC: the attachment section's bytes.
      let target = start + CaskFormat.recordHeaderLength + keyLength - 33
      bytes[target] ^= 0x20
      let total =
        CaskFormat.recordHeaderLength + keyLength
        + Int(
          bytes.withUnsafeBytes { loadLittleEndian($0, at: start + 20, as: UInt32.self) })
      RecordEncoder.setChecksum(in: &bytes, recordAt: start, length: total)
      try Data(bytes).write(to: URL(fileURLWithPath: segment))
      let hinted = try Fixture.open(path, keys: keys)
      #expect(throws: CaskError.self) { try hinted.get(Fixture.objectKey("1")) }
      #expect(try !hinted.verify().isClean)
      try hinted.close()
      try Fixture.removeHintsAndCheckpoint(path)
      let scanned = try Fixture.open(path, keys: keys)
      #expect(try scanned.keys().isEmpty)
      #expect(scanned.stats().recovery.corruptRegions.contains { $0.reason.contains("does not authenticate") })
      try scanned.close()
    }
  }

  @Test("the worked example of FORMAT.md: an event with one city entry attached has a 178-byte key message")
  func workedExample() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let store = try CaskStore(path: path, keys: try RNCryptor.Keys.random(), options: Fixture.options)
      let entry = "\u{1}cask.index\u{1}city\u{1}0123456789abcdef\u{1}events\u{0}Lisbon\u{0}e1"
      store.extensions.setCommitHook { _ in CommitAdditions(attachments: ["events\u{0}e1": [entry]]) }
      try store.put(Data("{}".utf8), forKey: "events\u{0}e1")
      let section = try #require(try AttachedKeys.encode([entry], owner: "events\u{0}e1"))
      #expect(section.count == 54)
      #expect(Array(section.prefix(4)) == [0x01, 0x00, 0x28, 0x00])
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(try Fixture.segmentNames(path)[0])")))
      let start = FileDamage.recordsStart(ofSegment: bytes)
      #expect(bytes.withUnsafeBytes { loadLittleEndian($0, at: start + 16, as: UInt32.self) } == 178)
      #expect(try store.get(entry) == Data())
      try store.close()
    }
  }

  @Test("a malformed attachment section is refused by the reader, and keys must be their group, a text and the id")
  func sectionChecks() throws {
    let owner = "obj\u{0}9"
    let section = try #require(try AttachedKeys.encode(["\u{1}g\u{0}t\u{0}9", "\u{1}g\u{0}u\u{0}9"], owner: owner))
    let ownerBytes = Array(owner.utf8)
    #expect(
      section.withUnsafeBytes { AttachedKeys.keys(in: $0, owner: owner) } == [
        "\u{1}g\u{0}t\u{0}9", "\u{1}g\u{0}u\u{0}9",
      ])
    var cut = section
    cut.removeLast()
    #expect(
      cut.withUnsafeBytes { s in ownerBytes.withUnsafeBytes { AttachedKeys.isWellFormed(s, owner: $0) } } == false)
    var zeroCount = section
    zeroCount[0] = 0
    zeroCount[1] = 0
    #expect(
      zeroCount.withUnsafeBytes { s in ownerBytes.withUnsafeBytes { AttachedKeys.isWellFormed(s, owner: $0) } } == false
    )
    #expect(throws: CaskError.self) { try AttachedKeys.encode(["\u{1}g\u{0}t\u{0}8"], owner: owner) }
    #expect(throws: CaskError.self) { try AttachedKeys.encode(["\u{1}g\u{0}t\u{0}x\u{0}9"], owner: owner) }
    #expect(throws: CaskError.self) { try AttachedKeys.encode(["\u{1}g\u{0}t"], owner: "nogroup") }
  }

  @Test("a section lists its groups and each group's texts in byte order, each once, whatever order the keys come in")
  func sectionOrder() throws {
    let keys = [
      "\u{1}h\u{0}b\u{0}9", "\u{1}g\u{0}t\u{0}9", "\u{1}gg\u{0}z\u{0}9", "\u{1}h\u{0}a\u{0}9", "\u{1}g\u{0}\u{0}9",
      "\u{1}g\u{0}t\u{0}9",
    ]
    let section = try #require(try AttachedKeys.encode(keys, owner: "obj\u{0}9"))
    let expected: [UInt8] = [
      0x03, 0x00,
      0x02, 0x00, 0x01, 0x67, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x74,
      0x03, 0x00, 0x01, 0x67, 0x67, 0x01, 0x00, 0x01, 0x00, 0x7a,
      0x02, 0x00, 0x01, 0x68, 0x02, 0x00, 0x01, 0x00, 0x61, 0x01, 0x00, 0x62,
    ]
    #expect(section == expected)
    #expect(
      section.withUnsafeBytes { AttachedKeys.keys(in: $0, owner: "obj\u{0}9") } == [
        "\u{1}g\u{0}\u{0}9", "\u{1}g\u{0}t\u{0}9", "\u{1}gg\u{0}z\u{0}9", "\u{1}h\u{0}a\u{0}9", "\u{1}h\u{0}b\u{0}9",
      ])
    #expect(throws: CaskError.self) { try AttachedKeys.encode(["\u{0}t\u{0}9"], owner: "obj\u{0}9") }
  }
}

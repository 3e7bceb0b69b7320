import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// Someone who holds the files but not the password rearranges authentic records (format
/// version 3, Docs/FORMAT.md section 5.4): each record's key message is sealed for its type,
/// flags, segment, offset, sequence and value, so every rearrangement is reported and nothing
/// it would bring back is served.
@Suite("Records rearranged by someone without the password are detected")
struct TamperDetectionTests {
  static let options = CaskStore.Options(durability: .never, autoCompaction: nil)

  /// Each write its own batch, closed; returns the keys.
  static func makeStore(_ path: String, writes: [(String, String?)]) throws -> RNCryptor.Keys {
    let keys = try RNCryptor.Keys.random()
    let store = try CaskStore(path: path, keys: keys, options: options)
    for (key, value) in writes {
      if let value { try store.put(Data(value.utf8), forKey: key) } else { try store.delete(key) }
    }
    try store.close()
    return keys
  }

  static func segmentPath(_ path: String, id: UInt32 = 1) -> String { "\(path)/\(Segment.fileName(id: id))" }

  static func read(_ file: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: file))) }

  /// Writes a segment back and removes its hint, so that open reads every record.
  static func write(_ bytes: [UInt8], to file: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: file))
    try? FileManager.default.removeItem(atPath: String(file.dropLast(4)) + "." + CaskFormat.hintExtension)
  }

  /// The records of a segment's bytes: offset and length, walking the lengths they claim.
  static func records(_ bytes: [UInt8]) -> [Range<Int>] {
    var ranges: [Range<Int>] = []
    var position = FileDamage.recordsStart(ofSegment: bytes)
    while position + CaskFormat.recordHeaderLength <= bytes.count {
      let header = bytes.withUnsafeBytes {
        RecordHeader.parse(UnsafeRawBufferPointer(rebasing: $0[position..<position + CaskFormat.recordHeaderLength]))
      }
      guard let header, position + header.totalLength <= bytes.count else { break }
      ranges.append(position..<position + header.totalLength)
      position += header.totalLength
    }
    return ranges
  }

  /// Checks that a plain open refuses the store, then opens it for salvage (read-only) and
  /// returns it with the reasons open reported.
  static func reopen(_ path: String, keys: RNCryptor.Keys, options: CaskStore.Options = options) throws -> (
    CaskStore, [String]
  ) {
    #expect {
      try CaskStore(path: path, keys: keys, options: options)
    } throws: { error in
      if case CaskError.integrityViolation = error { return true }
      return false
    }
    var salvage = options
    salvage.allowIntegrityViolations = true
    let store = try CaskStore(path: path, keys: keys, options: salvage)
    #expect(!store.stats().recovery.integrityViolations.isEmpty)
    return (store, store.stats().recovery.corruptRegions.map(\.reason))
  }

  @Test("a tombstone forged from a put's key message is rejected; the key keeps its value")
  func forgedTombstone() throws {
    try withTemporaryDirectory("tamper-tombstone") { directory in
      let path = directory.file("store.cask")
      let keys = try Self.makeStore(path, writes: [("a", "1"), ("b", "2")])
      var bytes = try Self.read(Self.segmentPath(path))
      let put = Self.records(bytes)[0]
      // A delete record: the put's header as a delete without a value, its key message as is.
      var forged = Array(bytes[put.lowerBound..<put.lowerBound + CaskFormat.recordHeaderLength])
      let keyLength = Int(forged[16]) | Int(forged[17]) << 8
      forged[4] = CaskFormat.recordTypeDelete
      for index in 20..<24 { forged[index] = 0 }
      forged += bytes[put.lowerBound + 24..<put.lowerBound + 24 + keyLength]
      RecordEncoder.setChecksum(in: &forged, recordAt: 0, length: forged.count)
      bytes += forged
      try Self.write(bytes, to: Self.segmentPath(path))

      let (store, reasons) = try Self.reopen(path, keys: keys)
      defer { try? store.close() }
      #expect(try store.get("a") == Data("1".utf8))
      #expect(reasons.contains { $0.contains("record type does not match") }, "\(reasons)")
      #expect(try !store.verify().isClean)
    }
  }

  @Test("a value message in a key message's place is not read as a key")
  func valueInKeyPlace() throws {
    try withTemporaryDirectory("tamper-value-as-key") { directory in
      let path = directory.file("store.cask")
      let keys = try Self.makeStore(path, writes: [("a", "1")])
      var bytes = try Self.read(Self.segmentPath(path))
      let put = Self.records(bytes)[0]
      let keyLength = Int(bytes[put.lowerBound + 16]) | Int(bytes[put.lowerBound + 17]) << 8
      let valueMessage = Array(bytes[(put.lowerBound + 24 + keyLength)..<put.upperBound])
      // A put whose key message and value message are both the value message.
      var forged = Array(bytes[put.lowerBound..<put.lowerBound + CaskFormat.recordHeaderLength])
      withUnsafeBytes(of: UInt32(valueMessage.count).littleEndian) {
        for index in 0..<4 { forged[16 + index] = $0[index] }
      }
      withUnsafeBytes(of: UInt32(valueMessage.count).littleEndian) {
        for index in 0..<4 { forged[20 + index] = $0[index] }
      }
      forged += valueMessage + valueMessage
      RecordEncoder.setChecksum(in: &forged, recordAt: 0, length: forged.count)
      bytes += forged
      try Self.write(bytes, to: Self.segmentPath(path))

      let (store, reasons) = try Self.reopen(path, keys: keys)
      defer { try? store.close() }
      #expect(try store.keys() == ["a"])
      #expect(reasons.contains { $0.contains("not a key message") }, "\(reasons)")
      #expect(try !store.verify().isClean)
    }
  }

  @Test("an old record replayed at the end does not bring its old value back")
  func replayedRecord() throws {
    try withTemporaryDirectory("tamper-replay") { directory in
      let path = directory.file("store.cask")
      let keys = try Self.makeStore(path, writes: [("a", "1"), ("a", "2"), ("b", nil)])
      var bytes = try Self.read(Self.segmentPath(path))
      bytes += bytes[Self.records(bytes)[0]]
      try Self.write(bytes, to: Self.segmentPath(path))

      let (store, reasons) = try Self.reopen(path, keys: keys)
      defer { try? store.close() }
      #expect(try store.get("a") == Data("2".utf8))
      #expect(reasons.contains { $0.contains("another offset") }, "\(reasons)")
      #expect(try !store.verify().isClean)
    }
  }

  @Test("a deleted key's put duplicated after its tombstone stays deleted")
  func duplicatedRecord() throws {
    try withTemporaryDirectory("tamper-duplicate") { directory in
      let path = directory.file("store.cask")
      let keys = try Self.makeStore(path, writes: [("a", "1"), ("a", nil)])
      var bytes = try Self.read(Self.segmentPath(path))
      bytes += bytes[Self.records(bytes)[0]]
      try Self.write(bytes, to: Self.segmentPath(path))

      let (store, reasons) = try Self.reopen(path, keys: keys)
      defer { try? store.close() }
      #expect(try store.get("a") == nil)
      #expect(!reasons.isEmpty)
      #expect(try !store.verify().isClean)
    }
  }

  @Test("two records swapped in place are both rejected, neither read under the other's place")
  func reorderedRecords() throws {
    try withTemporaryDirectory("tamper-reorder") { directory in
      let path = directory.file("store.cask")
      let keys = try Self.makeStore(path, writes: [("a", "1"), ("b", "2"), ("a", "3")])
      var bytes = try Self.read(Self.segmentPath(path))
      let ranges = Self.records(bytes)
      #expect(ranges[1].count == ranges[2].count)
      let second = Array(bytes[ranges[1]])
      bytes.replaceSubrange(ranges[1], with: bytes[ranges[2]])
      bytes.replaceSubrange(ranges[2], with: second)
      try Self.write(bytes, to: Self.segmentPath(path))

      let (store, reasons) = try Self.reopen(path, keys: keys)
      defer { try? store.close() }
      // Only the first record is where it was written.
      #expect(try store.get("a") == Data("1".utf8))
      #expect(try store.get("b") == nil)
      #expect(reasons.filter { $0.contains("another offset") }.count == 2, "\(reasons)")
      #expect(try !store.verify().isClean)
    }
  }

  @Test("a record cut from the middle is reported: the records after it no longer sit where they were sealed")
  func recordCutFromTheMiddle() throws {
    try withTemporaryDirectory("tamper-cut") { directory in
      let path = directory.file("store.cask")
      let keys = try Self.makeStore(path, writes: [("a", "1"), ("a", nil), ("b", "2")])
      var bytes = try Self.read(Self.segmentPath(path))
      bytes.removeSubrange(Self.records(bytes)[1])
      try Self.write(bytes, to: Self.segmentPath(path))

      let (store, reasons) = try Self.reopen(path, keys: keys)
      defer { try? store.close() }
      #expect(try store.get("b") == nil)
      #expect(reasons.contains { $0.contains("another offset") }, "\(reasons)")
      #expect(try !store.verify().isClean)
    }
  }

  @Test("a record copied into another segment at the same offset is rejected")
  func recordMovedToAnotherSegment() throws {
    try withTemporaryDirectory("tamper-move") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      var options = Self.options
      options.segmentSizeLimit = 300
      let store = try CaskStore(path: path, keys: keys, options: options)
      try store.put(Data("1".utf8), forKey: "a")
      try store.put(Data("2".utf8), forKey: "a")
      try store.close()
      let first = try Self.read(Self.segmentPath(path, id: 1))
      var second = try Self.read(Self.segmentPath(path, id: 2))
      let old = Self.records(first)[0]
      let new = Self.records(second)[0]
      #expect(old == new)
      second.replaceSubrange(new, with: first[old])
      try Self.write(second, to: Self.segmentPath(path, id: 2))

      let (reopened, reasons) = try Self.reopen(path, keys: keys, options: options)
      defer { try? reopened.close() }
      #expect(try reopened.get("a") == Data("1".utf8))
      #expect(reasons.contains { $0.contains("another segment") }, "\(reasons)")
      #expect(try !reopened.verify().isClean)
    }
  }

  @Test("a record from another store under the same password does not authenticate")
  func recordFromAnotherStore() throws {
    try withTemporaryDirectory("tamper-foreign") { directory in
      let password = "one password for both"
      var paths: [String] = []
      for name in ["mine.cask", "theirs.cask"] {
        let path = directory.file(name)
        let store = try CaskStore(path: path, password: password, options: Self.options)
        try store.put(Data(name.utf8), forKey: "a")
        try store.close()
        paths.append(path)
      }
      var mine = try Self.read(Self.segmentPath(paths[0]))
      let theirs = try Self.read(Self.segmentPath(paths[1]))
      let ranges = Self.records(mine)
      // Theirs at the offset where mine would have written its next record.
      var foreign = Array(theirs[Self.records(theirs)[0]])
      #expect(ranges.count == 1)
      foreign[8] = 2
      RecordEncoder.setChecksum(in: &foreign, recordAt: 0, length: foreign.count)
      mine += foreign
      try Self.write(mine, to: Self.segmentPath(paths[0]))

      // After a clean close the segment is listed as active at its length: the record after
      // it is read as the segment's own, and does not authenticate.
      let opened = try CaskStore(path: paths[0], password: password, options: Self.options)
      #expect(try opened.get("a") == Data("mine.cask".utf8))
      #expect(opened.stats().recovery.corruptRegions.contains { $0.reason.contains("authenticate") })
      #expect(try !opened.verify().isClean)
      try opened.close()
      var salvage = Self.options
      salvage.allowIntegrityViolations = true
      let store = try CaskStore(path: paths[0], password: password, options: salvage)
      defer { try? store.close() }
      #expect(try store.get("a") == Data("mine.cask".utf8))
      #expect(store.stats().recovery.corruptRegions.contains { $0.reason.contains("authenticate") })
      #expect(try !store.verify().isClean)
    }
  }

  @Test("compaction seals each copied record again for its new place; the copies read and verify clean")
  func compactionResealsForNewPlace() throws {
    try withTemporaryDirectory("tamper-compaction") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      var options = Self.options
      options.segmentSizeLimit = 400
      let store = try CaskStore(path: path, keys: keys, options: options)
      for round in 0..<4 {
        for key in ["a", "b", "c"] { try store.put(Data("\(key)\(round)".utf8), forKey: key) }
      }
      try store.delete("b")
      try store.compact()
      #expect(try store.verify().isClean)
      try store.close()
      let reopened = try CaskStore(path: path, keys: keys, options: options)
      defer { try? reopened.close() }
      #expect(try reopened.keys().sorted() == ["a", "c"])
      #expect(try reopened.get("a") == Data("a3".utf8))
      #expect(reopened.stats().recovery.isClean)
      #expect(try reopened.verify().isClean)
    }
  }

  @Test("a version 2 store opens, stays version 2 through writes and compaction, and reads back")
  func versionTwoStoreKeepsItsVersion() throws {
    try withTemporaryDirectory("version-two") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      var old = Self.options
      old.newStoreFormatVersion = 2
      let store = try CaskStore(path: path, keys: keys, options: old)
      try store.put(Data("1".utf8), forKey: "a")
      try store.close()
      // Opened by default options, which create version 3 stores only.
      let reopened = try CaskStore(path: path, keys: keys, options: Self.options)
      #expect(try reopened.get("a") == Data("1".utf8))
      try reopened.put(Data("2".utf8), forKey: "b")
      try reopened.compact()
      #expect(try reopened.verify().isClean)
      try reopened.close()
      let header = try Self.read("\(path)/\(CaskFormat.headerFileName)")
      #expect(header[8] == 2)
      let again = try CaskStore(path: path, keys: keys, options: Self.options)
      defer { try? again.close() }
      #expect(try again.get("b") == Data("2".utf8))
      #expect(again.stats().recovery.isClean)
    }
  }

  @Test("a version 2 segment planted in a version 3 store is not read")
  func versionTwoSegmentInVersionThreeStore() throws {
    try withTemporaryDirectory("planted-version-two") { directory in
      let path = directory.file("store.cask")
      let keys = try Self.makeStore(path, writes: [("a", "1")])
      var segment = try Self.read(Self.segmentPath(path))
      segment[8] = 2
      segment.replaceSubrange(
        28..<32, with: withUnsafeBytes(of: CRC32C.checksum(Array(segment[0..<28])).littleEndian) { Array($0) })
      try Self.write(segment, to: Self.segmentPath(path))
      let store = try CaskStore(path: path, keys: keys, options: Self.options)
      defer { try? store.close() }
      #expect(try store.get("a") == nil)
      #expect(store.stats().recovery.unreadableSegments == [Segment.fileName(id: 1)])
    }
  }
}

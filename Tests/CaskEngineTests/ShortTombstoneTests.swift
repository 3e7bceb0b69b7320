import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A version 5 tombstone's key message carries the short binding (Docs/FORMAT.md, section 5.4,
/// "Version 5: short tombstones"): tag 'D', flags, segment, offset with the identity's stamp,
/// sequence, then the key. It is refused anywhere but in a delete record of a version 5 segment
/// at the place it was sealed for, and a delete there must carry it.
@Suite("Short tombstones of format version 5")
struct ShortTombstoneTests {
  /// A 16-byte key, the size `cask-bench peers` deletes.
  static let key = "0123456789abcdef"

  /// A store of `version` with one put of `key` and its delete, each its own batch, closed.
  static func storeWithTombstone(_ path: String, version: UInt16) throws -> RNCryptor.Keys {
    let keys = try RNCryptor.Keys.random()
    var options = TamperDetectionTests.options
    options.newStoreFormatVersion = version
    let store = try CaskStore(path: path, keys: keys, options: options)
    try store.put(Data("value".utf8), forKey: key)
    try store.delete(key)
    try store.close()
    return keys
  }

  /// The little-endian integer at `offset` of `bytes`.
  static func load<T: FixedWidthInteger>(_ bytes: [UInt8], at offset: Int, as type: T.Type) -> T {
    bytes.withUnsafeBytes { loadLittleEndian($0, at: offset, as: type) }
  }

  /// The data key of the store at `path` (what its records are sealed under), unwrapped with
  /// the caller's `keys`.
  static func dataKeys(_ path: String, keys: RNCryptor.Keys) throws -> RNCryptor.Keys {
    let file = "\(path)/\(CaskFormat.headerFileName)"
    let header = try StoreHeader.decode(try Data(contentsOf: URL(fileURLWithPath: file)), path: file)
    return try StoreCredential.keys(keys).unwrap(header, path: file)
  }

  /// The key message of the record at `range` of `bytes`, opened with `keys`.
  static func keyPlaintext(_ bytes: [UInt8], record range: Range<Int>, keys: RNCryptor.Keys) throws -> [UInt8] {
    let keyLength = Int(Self.load(bytes, at: range.lowerBound + 16, as: UInt32.self))
    let start = range.lowerBound + CaskFormat.recordHeaderLength
    return [UInt8](try RNCryptor.decrypt(Data(bytes[start..<start + keyLength]), keys: keys))
  }

  @Test("a version 5 tombstone of a 16-byte key is 122 bytes with the short binding; version 3 keeps 154")
  func tombstoneSize() throws {
    for (version, expected) in [(UInt16(5), 122), (3, 154)] {
      try withTemporaryDirectory("short-tombstone-size") { directory in
        let path = directory.file("store.cask")
        let keys = try Self.storeWithTombstone(path, version: version)
        let bytes = try TamperDetectionTests.read(TamperDetectionTests.segmentPath(path))
        let records = TamperDetectionTests.records(bytes)
        try #require(records.count == 2)
        let tombstone = records[1]
        #expect(bytes[tombstone.lowerBound + 4] == CaskFormat.recordTypeDelete)
        #expect(tombstone.count == expected, "version \(version)")
        let plaintext = try Self.keyPlaintext(bytes, record: tombstone, keys: try Self.dataKeys(path, keys: keys))
        if version == 5 {
          #expect(plaintext.count == CaskFormat.tombstoneBindingLength + Self.key.utf8.count)
          #expect(plaintext[0] == CaskFormat.messageTagTombstone)
          #expect(plaintext[1] == CaskFormat.recordFlagBatchStart | CaskFormat.recordFlagBatchEnd)
          #expect(Self.load(plaintext, at: 2, as: UInt32.self) == 1)
          #expect(Self.load(plaintext, at: 6, as: UInt64.self) & 0xFFFF_FFFF == UInt64(tombstone.lowerBound))
          #expect(Self.load(plaintext, at: 14, as: UInt64.self) == 2)
          #expect(Array(plaintext[CaskFormat.tombstoneBindingLength...]) == Array(Self.key.utf8))
        } else {
          #expect(plaintext.count == CaskFormat.keyBindingLength + Self.key.utf8.count)
          #expect(plaintext[0] == CaskFormat.messageTagKey)
        }
        // Read back by a scan (no hint) and by verify: the key stays deleted.
        try TamperDetectionTests.write(bytes, to: TamperDetectionTests.segmentPath(path))
        var options = TamperDetectionTests.options
        options.newStoreFormatVersion = version
        let store = try CaskStore(path: path, keys: keys, options: options)
        defer { try? store.close() }
        #expect(try store.get(Self.key) == nil)
        #expect(store.stats().recovery.integrityViolations.isEmpty)
        #expect(try store.verify().isClean)
      }
    }
  }

  @Test("a tombstone's key message in a put record is refused; the key stays deleted")
  func tombstoneKeyMessageInAPut() throws {
    try withTemporaryDirectory("short-tombstone-as-put") { directory in
      let path = directory.file("store.cask")
      let keys = try TamperDetectionTests.makeStore(path, writes: [("a", "1"), ("a", nil)])
      var bytes = try TamperDetectionTests.read(TamperDetectionTests.segmentPath(path))
      let records = TamperDetectionTests.records(bytes)
      let put = records[0]
      let tombstone = records[1]
      let putKeyLength = Int(Self.load(bytes, at: put.lowerBound + 16, as: UInt32.self))
      let valueMessage = Array(bytes[(put.lowerBound + 24 + putKeyLength)..<put.upperBound])
      // The tombstone as a put: its header and key message, then the put's value message.
      var forged = Array(bytes[tombstone])
      forged[4] = CaskFormat.recordTypePut
      withUnsafeBytes(of: UInt32(valueMessage.count).littleEndian) {
        for index in 0..<4 { forged[20 + index] = $0[index] }
      }
      forged += valueMessage
      RecordEncoder.setChecksum(in: &forged, recordAt: 0, length: forged.count)
      bytes += forged
      try TamperDetectionTests.write(bytes, to: TamperDetectionTests.segmentPath(path))

      let (store, reasons) = try TamperDetectionTests.reopen(path, keys: keys)
      defer { try? store.close() }
      #expect(try store.get("a") == nil)
      #expect(reasons.contains { $0.contains("record type does not match") }, "\(reasons)")
      #expect(try !store.verify().isClean)
    }
  }

  @Test("a tombstone replayed after a later put is refused; the put keeps its value")
  func replayedTombstone() throws {
    try withTemporaryDirectory("short-tombstone-replay") { directory in
      let path = directory.file("store.cask")
      let keys = try TamperDetectionTests.makeStore(path, writes: [("a", "1"), ("a", nil), ("a", "2")])
      var bytes = try TamperDetectionTests.read(TamperDetectionTests.segmentPath(path))
      bytes += bytes[TamperDetectionTests.records(bytes)[1]]
      try TamperDetectionTests.write(bytes, to: TamperDetectionTests.segmentPath(path))

      let (store, reasons) = try TamperDetectionTests.reopen(path, keys: keys)
      defer { try? store.close() }
      #expect(try store.get("a") == Data("2".utf8))
      #expect(reasons.contains { $0.contains("another offset") }, "\(reasons)")
      #expect(try !store.verify().isClean)
    }
  }

  /// Appends a delete of `key` to segment 1 of `path`, its key message sealed by `cipher` for
  /// the place and sequence it lands at, with the segment's identity stamp when it has one.
  /// A closed store of `version` holding "a" and "b", then a delete of "b" appended to its
  /// segment with a binding in the short or the long layout.
  static func storeWithAppendedDelete(in directory: TemporaryDirectory, version: UInt16, shortTombstones: Bool) throws
    -> (path: String, keys: RNCryptor.Keys, options: CaskStore.Options)
  {
    let path = directory.file("store.cask")
    let keys = try RNCryptor.Keys.random()
    var options = TamperDetectionTests.options
    options.newStoreFormatVersion = version
    let writer = try CaskStore(path: path, keys: keys, options: options)
    try writer.put(Data("1".utf8), forKey: "a")
    try writer.put(Data("2".utf8), forKey: "b")
    try writer.close()
    try appendDelete(
      "b", to: path, sequence: 3,
      cipher: RecordCipher(keys: try dataKeys(path, keys: keys), shortTombstones: shortTombstones))
    return (path, keys, options)
  }

  static func appendDelete(_ key: String, to path: String, sequence: UInt64, cipher: RecordCipher) throws {
    var bytes = try TamperDetectionTests.read(TamperDetectionTests.segmentPath(path))
    let linked = FileDamage.recordsStart(ofSegment: bytes) > CaskFormat.segmentHeaderLength
    let stamp = linked ? UInt64(Self.load(bytes, at: 32, as: UInt32.self)) << 32 : 0
    let flags = CaskFormat.recordFlagBatchStart | CaskFormat.recordFlagBatchEnd
    let binding = RecordBinding(
      type: CaskFormat.recordTypeDelete, flags: flags, segmentID: 1, offset: UInt64(bytes.count) | stamp,
      sequence: sequence, valueDigest: [UInt8](repeating: 0, count: CaskFormat.valueDigestLength))
    RecordEncoder.append(
      to: &bytes, type: CaskFormat.recordTypeDelete, flags: flags, sequence: sequence,
      keyMessage: try cipher.sealKey(key, binding: binding), valueMessage: nil)
    try TamperDetectionTests.write(bytes, to: TamperDetectionTests.segmentPath(path))
  }

  @Test("a tombstone sealed in the other layout (long in version 5, short in version 3) is refused")
  func tombstoneOfTheOtherLayout() throws {
    for version in [UInt16(5), 3] {
      try withTemporaryDirectory("short-tombstone-layout") { directory in
        // Everything else of the binding is right: only its layout is the other version's.
        let (path, keys, options) = try Self.storeWithAppendedDelete(
          in: directory, version: version, shortTombstones: version != 5)

        let (store, reasons) = try TamperDetectionTests.reopen(path, keys: keys, options: options)
        defer { try? store.close() }
        #expect(try store.get("b") == Data("2".utf8), "version \(version)")
        #expect(reasons.contains { $0.contains("not a key message") }, "version \(version): \(reasons)")
        #expect(try !store.verify().isClean)
      }
    }
  }

  @Test("the same tombstone sealed in its segment's own layout is taken (the planted proof of the test above)")
  func tombstoneOfItsOwnLayoutIsTaken() throws {
    for version in [UInt16(5), 3] {
      try withTemporaryDirectory("short-tombstone-own-layout") { directory in
        let (path, keys, options) = try Self.storeWithAppendedDelete(
          in: directory, version: version, shortTombstones: version == 5)

        // A clean close lists the segment as active: the record after it is read as its own.
        let store = try CaskStore(path: path, keys: keys, options: options)
        defer { try? store.close() }
        let reasons = store.stats().recovery.corruptRegions.map(\.reason)
        #expect(try store.get("b") == nil, "version \(version)")
        let bindingReasons = ["key message", "sealed for", "sealed key", "authenticate"]
        #expect(!reasons.contains { reason in bindingReasons.contains { reason.contains($0) } }, "\(reasons)")
        #expect(store.stats().recovery.integrityViolations.isEmpty)
      }
    }
  }

  @Test("both binding layouts encode and decode back, and each is refused where the other belongs (seeded)")
  func bindingLayoutsRoundTrip() throws {
    var random = SeededRandom.make(test: "short tombstone bindings")
    for _ in 0..<testIterations(2_000) {
      let delete = random.next() % 2 == 0
      let binding = RecordBinding(
        type: delete ? CaskFormat.recordTypeDelete : CaskFormat.recordTypePut, flags: UInt8(random.next() % 4),
        segmentID: UInt32(truncatingIfNeeded: random.next()), offset: random.next(), sequence: random.next(),
        valueDigest: delete ? [UInt8](repeating: 0, count: CaskFormat.valueDigestLength) : [UInt8](random.bytes(32)))
      let key = [UInt8](random.bytes(1 + Int(random.next() % 40)))
      for short in [true, false] {
        let layout = binding.inSegment(shortTombstones: short)
        #expect(layout.short == (short && delete))
        var plaintext = [UInt8](repeating: 0, count: layout.encodedLength)
        plaintext.withUnsafeMutableBytes { layout.encode(into: $0) }
        plaintext += key
        let decoded = plaintext.withUnsafeBytes { RecordBinding.decode($0, shortTombstones: short) }
        #expect(decoded == layout, "seed \(random.seed)")
        #expect(Array(plaintext[layout.encodedLength...]) == key)
        // A delete's binding of one layout is not a key message in the other's segments.
        let across = plaintext.withUnsafeBytes { RecordBinding.decode($0, shortTombstones: !short) }
        #expect((across == nil) == delete, "seed \(random.seed)")
        // Random bytes never trap the decoder.
        let noise = [UInt8](random.bytes(Int(random.next() % 80)))
        _ = noise.withUnsafeBytes { RecordBinding.decode($0, shortTombstones: short) }
      }
    }
  }

  @Test("a tombstone spliced from a backup into its original's place is refused in version 5, taken in version 3")
  func tombstoneSplicedBetweenABackupAndItsOriginal() throws {
    for version in [UInt16(5), 3] {
      try withTemporaryDirectory("short-tombstone-splice") { directory in
        var options = TamperDetectionTests.options
        options.newStoreFormatVersion = version
        // Every 700-byte put fills a segment, so each store's delete after the backup starts
        // the same segment number, at the same offset and sequence.
        options.segmentSizeLimit = 1024
        let original = directory.file("original.cask")
        let copy = directory.file("copy.cask")
        let keys = try RNCryptor.Keys.random()
        let store = try CaskStore(path: original, keys: keys, options: options)
        for index in 0..<3 { try store.put(Data(repeating: UInt8(index), count: 700), forKey: "k\(index)") }
        try store.backup(to: copy)
        try store.delete("k0")
        try store.close()
        let other = try CaskStore(path: copy, keys: keys, options: options)
        try other.delete("k1")
        try other.close()

        // The original's tombstone of k0 over the copy's of k1, and the copy's hint removed so
        // that open reads the record.
        let name = try #require(try DamageFixture.segmentNames(in: copy).last)
        #expect(try DamageFixture.segmentNames(in: original).last == name)
        let source = try TamperDetectionTests.read("\(original)/\(name)")
        var target = try TamperDetectionTests.read("\(copy)/\(name)")
        let range = try #require(TamperDetectionTests.records(source).last)
        try #require(TamperDetectionTests.records(target).last == range, "the tombstones are not at the same place")
        target.replaceSubrange(range, with: source[range])
        try TamperDetectionTests.write(target, to: "\(copy)/\(name)")

        if version == 5 {
          let (spliced, reasons) = try TamperDetectionTests.reopen(copy, keys: keys, options: options)
          defer { try? spliced.close() }
          #expect(reasons.contains { $0.contains("another store or copy") }, "\(reasons)")
          #expect(try spliced.get("k0") == Data(repeating: 0, count: 700))
          #expect(try !spliced.verify().isClean)
        } else {
          // Without identities the original's tombstone deletes k0 in the copy, and k1 is back.
          let spliced = try CaskStore(path: copy, keys: keys, options: options)
          defer { try? spliced.close() }
          #expect(try spliced.get("k0") == nil)
          #expect(try spliced.get("k1") == Data(repeating: 1, count: 700))
        }
      }
    }
  }
}

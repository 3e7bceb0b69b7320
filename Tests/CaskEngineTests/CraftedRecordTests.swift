import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// Records whose messages authenticate but hold a key `put` never writes: an empty key, or
/// one longer than 65,535 bytes. Another implementation, or a bug, could seal them with the
/// store's data key. Prevents the trap in the index at open (empty key) and in the hint
/// writer (long key), as `scripts/read-store.py`, an independent reader, can write them.
/// Each such record's batch is reported as damage, like any record that does not read.
@Suite("Authenticated records with keys put never writes are damage, not a trap")
struct CraftedRecordTests {
  private static func keys(from start: UInt8) throws -> RNCryptor.Keys {
    try RNCryptor.Keys(
      encryptionKey: Data((0..<32).map { start &+ UInt8($0) }),
      hmacKey: Data((0..<32).map { start &+ 0x40 &+ UInt8($0) }))
  }

  /// A store directory with a known data key and one segment: "before", the crafted key's
  /// put (or delete), "after", each a batch of its own.
  private static func makeStore(in directory: TemporaryDirectory, crafted: Data, delete: Bool) throws -> (
    String, RNCryptor.Keys
  ) {
    let userKeys = try keys(from: 0x10)
    let dataKeys = try keys(from: 0x80)
    let path = directory.file("crafted.cask")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    var dataKey = dataKeys.encryptionKey.withUnsafeBytes { Data($0) }
    dataKeys.hmacKey.withUnsafeBytes { dataKey.append(contentsOf: $0) }
    let header = FuzzingEntry.storeHeader(
      wrappedKey: try RNCryptor.encrypt(dataKey, keys: userKeys), passwordWrapped: false,
      version: 2)
    try Data(header).write(to: URL(fileURLWithPath: "\(path)/\(CaskFormat.headerFileName)"))
    // Version 2, whose key messages hold the key alone, so that a crafted key is sealed as
    // another implementation would seal it.
    let cipher = RecordCipher(keys: dataKeys, version: 2)
    let whole = CaskFormat.recordFlagBatchStart | CaskFormat.recordFlagBatchEnd
    var segment = FuzzingEntry.segmentHeader(id: 1, base: 1, sub: 0, version: 2)
    FuzzingEntry.appendRecord(
      to: &segment, delete: false, flags: whole, sequence: 1, keyMessage: try cipher.sealKey("before"),
      valueMessage: try cipher.sealValue(Data("1".utf8), forKey: "before"))
    // The value binds its key by length and bytes (FORMAT.md section 5.2), as a writer would.
    var bound = Data([UInt8(truncatingIfNeeded: crafted.count), UInt8(truncatingIfNeeded: crafted.count >> 8)])
    bound += crafted + Data("2".utf8)
    FuzzingEntry.appendRecord(
      to: &segment, delete: delete, flags: whole, sequence: 2,
      keyMessage: try RNCryptor.encrypt(crafted, keys: dataKeys),
      valueMessage: delete ? nil : try RNCryptor.encrypt(bound, keys: dataKeys))
    FuzzingEntry.appendRecord(
      to: &segment, delete: false, flags: whole, sequence: 3, keyMessage: try cipher.sealKey("after"),
      valueMessage: try cipher.sealValue(Data("3".utf8), forKey: "after"))
    try Data(segment).write(to: URL(fileURLWithPath: "\(path)/\(Segment.fileName(id: 1))"))
    return (path, userKeys)
  }

  @Test(
    "an empty key or one of 70,000 bytes, put or deleted: open reports the batch, the rest reads, a writable open and close write a hint",
    arguments: [(0, false), (0, true), (70_000, false), (70_000, true)])
  func craftedKey(length: Int, delete: Bool) throws {
    try withTemporaryDirectory("crafted-key") { directory throws in
      let (path, userKeys) = try Self.makeStore(
        in: directory, crafted: Data(repeating: UInt8(ascii: "k"), count: length), delete: delete)
      for readOnly in [true, false] {
        // A segment size limit below the segment's length seals it at open: its hint is written.
        let options = CaskStore.Options(
          durability: .never, segmentSizeLimit: 64, autoCompaction: nil, readOnly: readOnly)
        let store = try CaskStore(path: path, keys: userKeys, options: options)
        #expect(try store.keys() == ["after", "before"])
        #expect(try store.get("before") == Data("1".utf8))
        #expect(try store.get("after") == Data("3".utf8))
        let regions = store.stats().recovery.corruptRegions
        #expect(regions.count == 1, "\(regions)")
        #expect(
          regions.first?.reason.contains(length == 0 ? "key is empty" : "longer than 65535") == true, "\(regions)")
        #expect(try !store.verify().isClean)
        try store.close()
      }
    }
  }
}

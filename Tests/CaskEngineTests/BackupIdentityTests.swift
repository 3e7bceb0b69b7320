import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A backup shares the original's data key. In version 5 it gets an identity of its own at copy
/// time (in its authenticated header), and every segment either writes names its writer, whose
/// identity every record's binding carries: a record of one spliced into the other at the same
/// segment, offset and sequence is found by `get` and `verify`, never served. The same splice
/// between a version 3 store and its backup passes (the planted proof).
@Suite struct BackupIdentityTests {
  private static func options(version: UInt16) -> CaskStore.Options {
    var options = testStoreOptions
    // Every put of `valueLength` bytes fills a segment: the original and the copy then write
    // their next records to the same segment number, offset and sequence.
    options.segmentSizeLimit = 1024
    options.autoCompaction = nil
    options.newStoreFormatVersion = version
    return options
  }

  private static let valueLength = 700

  /// The original and its backup, each with `shared` written to a value of its own afterwards.
  private static func forkedPair(in directory: TemporaryDirectory, version: UInt16) throws -> (String, String) {
    let original = directory.file("original.cask")
    let copy = directory.file("copy.cask")
    let store = try CaskStore(path: original, password: testPassword, options: options(version: version))
    for index in 0..<3 {
      try store.put(Data(repeating: UInt8(index), count: valueLength), forKey: "before-\(index)")
    }
    try store.backup(to: copy)
    try store.put(Data(repeating: 0xAA, count: valueLength), forKey: "shared")
    try store.close()
    let other = try CaskStore(path: copy, password: testPassword, options: options(version: version))
    try other.put(Data(repeating: 0xBB, count: valueLength), forKey: "shared")
    try other.close()
    return (original, copy)
  }

  /// The newest segment of `path` and the byte range of its first record.
  private static func firstRecordOfNewestSegment(_ path: String) throws -> (String, Range<Int>) {
    let name = try #require(try DamageFixture.segmentNames(in: path).last)
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(name)")))
    let range = try #require(TamperDetectionTests.records(bytes).first)
    return (name, range)
  }

  /// Writes the original's record of `shared` over the copy's, at the same place.
  private static func splice(from original: String, into copy: String) throws {
    let (name, range) = try firstRecordOfNewestSegment(original)
    let (copyName, copyRange) = try firstRecordOfNewestSegment(copy)
    try #require(name == copyName && range == copyRange, "the two records are not at the same place")
    let source = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(original)/\(name)")))
    var target = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(copy)/\(name)")))
    target.replaceSubrange(range, with: source[range])
    try Data(target).write(to: URL(fileURLWithPath: "\(copy)/\(name)"))
  }

  @Test func backupOfAVersionFiveStoreHasAnIdentityOfItsOwn() throws {
    try withTemporaryDirectory("backup-identity") { directory in
      let (original, copy) = try Self.forkedPair(in: directory, version: 5)
      func identity(_ path: String) throws -> [UInt8]? {
        let header = "\(path)/\(CaskFormat.headerFileName)"
        return try StoreHeader.decode(try Data(contentsOf: URL(fileURLWithPath: header)), path: header).identity
      }
      let first = try #require(try identity(original))
      #expect(try identity(copy) != first)
      // Both open and verify clean with their own writes.
      for (path, byte) in [(original, UInt8(0xAA)), (copy, 0xBB)] {
        let store = try CaskStore(path: path, password: testPassword, options: Self.options(version: 5))
        defer { try? store.close() }
        #expect(try store.get("shared") == Data(repeating: byte, count: Self.valueLength))
        #expect(try store.verify().isClean)
      }
    }
  }

  @Test func recordSplicedBetweenABackupAndItsOriginalIsFound() throws {
    for version in [UInt16(3), 5] {
      try withTemporaryDirectory("backup-splice") { directory in
        let (original, copy) = try Self.forkedPair(in: directory, version: version)
        try Self.splice(from: original, into: copy)
        let store = try CaskStore(path: copy, password: testPassword, options: Self.options(version: version))
        defer { try? store.close() }
        if version == 5 {
          #expect {
            _ = try store.get("shared")
          } throws: { error in
            guard case CaskError.corrupt(_, _, let reason) = error else { return false }
            return reason.contains("another store or copy")
          }
          #expect(try store.verify().damage.contains { $0.reason.contains("another store or copy") })
        } else {
          // Without identities: the original's value is served from the copy, and verify is clean.
          #expect(try store.get("shared") == Data(repeating: 0xAA, count: Self.valueLength))
          #expect(try store.verify().isClean)
        }
      }
    }
  }

  /// The manifest of one put in the other's place is refused: it names the other identity.
  @Test func manifestOfTheOriginalIsRefusedInTheCopy() throws {
    try withTemporaryDirectory("backup-manifest") { directory in
      let (original, copy) = try Self.forkedPair(in: directory, version: 5)
      let manifest = CaskFormat.manifestFileName
      try FileManager.default.removeItem(atPath: "\(copy)/\(manifest)")
      try FileManager.default.copyItem(atPath: "\(original)/\(manifest)", toPath: "\(copy)/\(manifest)")
      #expect {
        _ = try CaskStore(path: copy, password: testPassword, options: Self.options(version: 5))
      } throws: { error in
        guard case CaskError.integrityViolation(let file, let reason) = error else { return false }
        return file == manifest && reason.contains("another store or copy")
      }
    }
  }
}

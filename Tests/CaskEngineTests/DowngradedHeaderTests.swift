import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Before format 5 the header's version field has only a CRC: someone who holds the files can
/// change it from 3 to 2. A version 2 header beside version 3 files (a manifest, version 3
/// segments) is refused as a downgrade, never followed; and an upgrade never removes a store
/// it could not read whole. (Version 5 headers: `AuthenticatedHeaderTests`.)
@Suite struct DowngradedHeaderTests {
  /// A closed version 3 store with ten keys over several segments.
  private func makeStore(in directory: TemporaryDirectory) throws -> String {
    let path = directory.file("store.cask")
    var options = testStoreOptions
    options.segmentSizeLimit = 2048
    options.newStoreFormatVersion = 3
    let store = try CaskStore(path: path, password: testPassword, options: options)
    for index in 0..<10 { try store.put(Data(repeating: UInt8(index), count: 300), forKey: "key-\(index)") }
    try store.close()
    return path
  }

  private func isDowngrade(_ error: any Error) -> Bool {
    guard case CaskError.integrityViolation(_, let reason) = error else { return false }
    return reason.contains("downgraded header")
  }

  @Test func downgradedHeaderIsRefusedForWritingAndReading() throws {
    try withTemporaryDirectory("downgrade-open") { directory in
      let path = try makeStore(in: directory)
      try FileDamage.setHeaderVersion(2, ofStore: path)
      let before = try FileDamage.files(ofStore: path)
      #expect {
        _ = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      } throws: { isDowngrade($0) }
      var readOnly = testStoreOptions
      readOnly.readOnly = true
      #expect {
        _ = try CaskStore(path: path, password: testPassword, options: readOnly)
      } throws: { isDowngrade($0) }
      #expect(try FileDamage.files(ofStore: path) == before)
    }
  }

  /// The segments alone give the downgrade away, also when the manifest is gone too.
  @Test func versionThreeSegmentsBesideAVersionTwoHeaderAreADowngrade() throws {
    try withTemporaryDirectory("downgrade-segments") { directory in
      let path = try makeStore(in: directory)
      try FileDamage.setHeaderVersion(2, ofStore: path)
      try FileManager.default.removeItem(atPath: "\(path)/\(CaskFormat.manifestFileName)")
      #expect {
        _ = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      } throws: { isDowngrade($0) }
    }
  }

  @Test func upgradeOfADowngradedStoreRemovesNothing() throws {
    try withTemporaryDirectory("downgrade-upgrade") { directory in
      let path = try makeStore(in: directory)
      try FileDamage.setHeaderVersion(2, ofStore: path)
      let before = try FileDamage.files(ofStore: path)
      #expect {
        _ = try CaskStore.upgrade(at: path, password: testPassword, options: testStoreOptions)
      } throws: { isDowngrade($0) }
      #expect(try FileDamage.files(ofStore: path) == before)
      // The header put back, the store reads whole.
      try FileDamage.setHeaderVersion(3, ofStore: path)
      let store = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      defer { try? store.close() }
      #expect(store.count == 10)
    }
  }

  /// A version 2 store with a segment open cannot read: the upgrade would copy all but its
  /// records and then delete it.
  @Test func upgradeRefusesAStoreWithAnUnreadableSegment() throws {
    try withTemporaryDirectory("upgrade-unreadable") { directory in
      let path = directory.file("store.cask")
      var options = testStoreOptions
      options.newStoreFormatVersion = 2
      let store = try CaskStore(path: path, password: testPassword, options: options)
      for index in 0..<5 { try store.put(Data("v\(index)".utf8), forKey: "k\(index)") }
      try store.close()
      let segment = try #require(
        try FileManager.default.contentsOfDirectory(atPath: path).first { $0.hasSuffix(".seg") })
      try FileDamage.flipByte(at: 0, in: "\(path)/\(segment)")
      let before = try FileDamage.files(ofStore: path)
      #expect {
        _ = try CaskStore.upgrade(at: path, password: testPassword, options: options)
      } throws: { error in
        guard case CaskError.corrupt(let file, _, let reason) = error else { return false }
        return file == segment && reason.contains("left as it was")
      }
      #expect(try FileDamage.files(ofStore: path) == before)
    }
  }
}

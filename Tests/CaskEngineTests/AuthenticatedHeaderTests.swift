import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A version 5 header is authenticated under the data key, and its wrapped key names its
/// version: someone who holds the files but not the password can change no field of it. A
/// version field changed back to 2, 3 or 4 (CRC fixed) is refused as a downgrade, also in a
/// store that has no other file yet, and a wrong password still reads as one.
@Suite struct AuthenticatedHeaderTests {
  private func headerPath(_ store: String) -> String { "\(store)/\(CaskFormat.headerFileName)" }

  /// A closed version 5 store, empty or with ten keys over several segments.
  private func makeStore(in directory: TemporaryDirectory, keys: Int) throws -> String {
    let path = directory.file("store.cask")
    var options = testStoreOptions
    options.segmentSizeLimit = 2048
    let store = try CaskStore(path: path, password: testPassword, options: options)
    for index in 0..<keys { try store.put(Data(repeating: UInt8(index), count: 300), forKey: "key-\(index)") }
    try store.close()
    return path
  }

  private func isDowngrade(_ error: any Error) -> Bool {
    guard case CaskError.integrityViolation(let file, let reason) = error else { return false }
    return file == CaskFormat.headerFileName && reason.contains("downgraded header")
  }

  private func isAlteredHeader(_ error: any Error) -> Bool {
    guard case CaskError.integrityViolation(let file, let reason) = error else { return false }
    return file == CaskFormat.headerFileName && reason.contains("does not authenticate")
  }

  private func opens(_ path: String, password: String = testPassword, readOnly: Bool = false) throws -> Int {
    var options = testStoreOptions
    options.readOnly = readOnly
    let store = try CaskStore(path: path, password: password, options: options)
    defer { try? store.close() }
    return store.count
  }

  @Test func newStoresAreVersionFiveWithAnAuthenticatedHeader() throws {
    try withTemporaryDirectory("v5-new") { directory in
      let path = try makeStore(in: directory, keys: 0)
      let header = try StoreHeader.decode(
        try Data(contentsOf: URL(fileURLWithPath: headerPath(path))), path: headerPath(path))
      #expect(header.version == CaskFormat.authenticatedVersion)
      #expect(header.identity?.count == CaskFormat.storeIdentityLength)
      #expect(header.authenticator?.count == CaskFormat.authenticatorLength)
      #expect(header.keyRing != nil)
      #expect(try opens(path) == 0)
    }
  }

  @Test func versionChangedBackOnAFreshStoreIsADowngrade() throws {
    for older in [UInt16(2), 3, 4] {
      try withTemporaryDirectory("v5-fresh-downgrade") { directory in
        let path = try makeStore(in: directory, keys: 0)
        try FileDamage.setHeaderVersion(older, ofStore: path)
        let before = try FileDamage.files(ofStore: path)
        #expect(throws: (any Error).self, "version \(older)") { try opens(path) }
        #expect {
          _ = try opens(path)
        } throws: { isDowngrade($0) }
        #expect {
          _ = try opens(path, readOnly: true)
        } throws: { isDowngrade($0) }
        // A wrong password is still a wrong password, not a finding about the header.
        #expect(throws: CaskError.wrongPassword) { _ = try opens(path, password: "not the password") }
        #expect(try FileDamage.files(ofStore: path) == before, "version \(older): nothing written")
        // Put back, the store opens: the refusal was the version field's alone.
        try FileDamage.setHeaderVersion(CaskFormat.authenticatedVersion, ofStore: path)
        #expect(try opens(path) == 0)
      }
    }
  }

  @Test func versionChangedBackOnAStoreWithDataIsADowngradeAndUpgradeRemovesNothing() throws {
    for older in [UInt16(2), 3, 4] {
      try withTemporaryDirectory("v5-data-downgrade") { directory in
        let path = try makeStore(in: directory, keys: 10)
        try FileDamage.setHeaderVersion(older, ofStore: path)
        let before = try FileDamage.files(ofStore: path)
        #expect {
          _ = try opens(path)
        } throws: { isDowngrade($0) }
        #expect {
          _ = try CaskStore.upgrade(at: path, password: testPassword, options: testStoreOptions)
        } throws: { isDowngrade($0) }
        #expect(try FileDamage.files(ofStore: path) == before)
        try FileDamage.setHeaderVersion(CaskFormat.authenticatedVersion, ofStore: path)
        #expect(try opens(path) == 10)
      }
    }
  }

  /// A byte of the store identity, of the key ring, or a flag bit no reader uses, changed with
  /// the CRC fixed, is refused: the MAC covers every byte before it.
  @Test func anyOtherFieldChangedIsRefused() throws {
    try withTemporaryDirectory("v5-field") { directory in
      let path = try makeStore(in: directory, keys: 3)
      let original = try FileDamage.headerBytes(ofStore: path)
      let identityOffset = original.count - 4 - CaskFormat.authenticatorLength - CaskFormat.storeIdentityLength
      let ringByte = identityOffset - 8
      // Byte 10 holds the flags' low byte; bit 4 means nothing to any reader.
      for (offset, mask) in [(identityOffset, UInt8(0x40)), (identityOffset + 15, 0x40), (ringByte, 0x40), (10, 0x10)] {
        var bytes = original
        bytes[offset] ^= mask
        try FileDamage.writeHeader(bytes, toStore: path)
        #expect(throws: (any Error).self) { try opens(path) }
        #expect {
          _ = try opens(path)
        } throws: { isAlteredHeader($0) }
        #expect(throws: CaskError.wrongPassword) { _ = try opens(path, password: "not the password") }
      }
      // The planted check: the unused flag bit set with the MAC recomputed under the data key
      // (which only the password's holder can do) opens, so the MAC is what refused it.
      var bytes = original
      bytes[10] ^= 0x10
      let header = try StoreHeader.decode(Data(original), path: headerPath(path))
      let keys = try StoreCredential.password(SecureBytes(utf8: testPassword)).unwrap(header, path: "")
      let macOffset = bytes.count - 4 - CaskFormat.authenticatorLength
      bytes.replaceSubrange(
        macOffset..<(macOffset + CaskFormat.authenticatorLength),
        with: try StoreHeader.authenticator(of: Array(bytes[0..<macOffset]), keys: keys))
      try FileDamage.writeHeader(bytes, toStore: path)
      #expect(try FileDamage.headerBytes(ofStore: path)[10] & 0x10 != 0)
      #expect(try opens(path, readOnly: true) == 3)
    }
  }

  /// The planted check for the bound version: a header genuinely written for version 4 by the
  /// password's holder (the same data key re-wrapped) is not a downgrade; only a version 5
  /// wrapped key under an older version field is.
  @Test func boundVersionTellsADowngradeFromAGenuineOlderHeader() throws {
    try withTemporaryDirectory("v5-bound") { directory in
      let path = try makeStore(in: directory, keys: 0)
      let header = try StoreHeader.decode(
        try Data(contentsOf: URL(fileURLWithPath: headerPath(path))), path: headerPath(path))
      let credential = StoreCredential.password(SecureBytes(utf8: testPassword))
      let keys = try credential.unwrap(header, path: "")
      var older = try credential.wrap(
        StoreCredential.concatenate(keys), version: CaskFormat.keyEpochsVersion, keyDerivation: testKeyDerivation)
      older.keyRing = header.keyRing
      #expect(throws: Never.self) { _ = try credential.unwrap(older, path: "") }
      var downgraded = header
      downgraded.version = CaskFormat.keyEpochsVersion
      #expect {
        _ = try credential.unwrap(downgraded, path: "")
      } throws: { isDowngrade($0) }
    }
  }
}

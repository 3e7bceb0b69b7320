import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

@Suite("Open refuses what is not a store it can read, with the error that says why, and writes nothing")
struct OpenRefusalTests {
  private let options = CaskStore.Options(durability: .never, autoCompaction: nil)

  @Test("a regular file at the path is notACaskStore and is left as it was")
  func regularFile() throws {
    try withTemporaryDirectory("refuse-file") { directory throws in
      let path = directory.file("plain.txt")
      try Data("just a text file".utf8).write(to: URL(fileURLWithPath: path))
      for readOnly in [false, true] {
        var options = options
        options.readOnly = readOnly
        #expect(throws: CaskError.notACaskStore(path: path)) {
          try CaskStore(path: path, password: "pw", options: options)
        }
      }
      #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("just a text file".utf8))
    }
  }

  @Test("a non-empty directory that is not a store is notACaskStore and gains no file")
  func foreignDirectory() throws {
    try withTemporaryDirectory("refuse-dir") { directory throws in
      let path = directory.file("photos")
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
      try Data("not ours".utf8).write(to: URL(fileURLWithPath: "\(path)/notes.txt"))
      for readOnly in [false, true] {
        var options = options
        options.readOnly = readOnly
        #expect(throws: CaskError.notACaskStore(path: path)) {
          try CaskStore(path: path, password: "pw", options: options)
        }
      }
      #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["notes.txt"])
    }
  }

  @Test("a missing store is storeNotFound, saying it does not exist, for a read-only open or without createIfMissing")
  func missingWithoutCreate() throws {
    try withTemporaryDirectory("refuse-missing") { directory throws in
      let path = directory.file("absent.cask")
      #expect(throws: CaskError.storeNotFound(path: path)) {
        try CaskStore(path: path, password: "pw", options: CaskStore.Options(readOnly: true))
      }
      #expect(throws: CaskError.storeNotFound(path: path)) {
        try CaskStore(path: path, password: "pw", options: CaskStore.Options(createIfMissing: false))
      }
      #expect(CaskError.storeNotFound(path: path).description == "\(path) does not exist")
      #expect(!FileManager.default.fileExists(atPath: path))
      // An empty directory exists: it is not a store, and is left empty.
      try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
      #expect(throws: CaskError.notACaskStore(path: path)) {
        try CaskStore(path: path, password: "pw", options: CaskStore.Options(createIfMissing: false))
      }
      #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
    }
  }

  @Test("a header of a newer format version (with a valid CRC) is unsupportedVersion")
  func newerHeaderVersion() throws {
    try withTemporaryDirectory("refuse-version") { directory throws in
      let path = directory.file("store.cask")
      try makeStore(path)
      let header = "\(path)/\(CaskFormat.headerFileName)"
      var bytes = try Data(contentsOf: URL(fileURLWithPath: header))
      // Version 5 is read (an authenticated header); the first one above it is not.
      Self.setVersion(CaskFormat.authenticatedVersion + 1, in: &bytes, at: 8, checksummedLength: bytes.count - 4)
      try bytes.write(to: URL(fileURLWithPath: header))
      let expected = CaskError.unsupportedVersion(
        found: Int(CaskFormat.authenticatedVersion) + 1, supported: Int(CaskFormat.authenticatedVersion))
      #expect(throws: expected) { try CaskStore(path: path, password: "pw", options: options) }
      #expect(throws: expected) {
        try CaskStore(path: path, password: "pw", options: CaskStore.Options(readOnly: true))
      }
    }
  }

  @Test("a segment of a newer format version (with a valid CRC) is unsupportedVersion, not skipped")
  func newerSegmentVersion() throws {
    try withTemporaryDirectory("refuse-segment-version") { directory throws in
      let path = directory.file("store.cask")
      try makeStore(path)
      let segment = "\(path)/\(try #require(try DamageFixture.segmentNames(in: path).first))"
      var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
      Self.setVersion(CaskFormat.formatVersion + 1, in: &bytes, at: 8, checksummedLength: 28)
      try bytes.write(to: URL(fileURLWithPath: segment))
      let before = try DamageFixture.snapshot(path)
      let expected = CaskError.unsupportedVersion(
        found: Int(CaskFormat.formatVersion) + 1, supported: Int(CaskFormat.formatVersion))
      #expect(throws: expected) {
        try CaskStore(path: path, password: "pw", options: options)
      }
      #expect(try DamageFixture.snapshot(path) == before)
    }
  }

  @Test("a store made with keys refuses a password, and the reverse, with wrongCredentialType")
  func wrongCredentialType() throws {
    try withTemporaryDirectory("refuse-credential") { directory throws in
      let keyed = directory.file("keyed.cask")
      let keys = try RNCryptor.Keys.random()
      let store = try CaskStore(path: keyed, keys: keys, options: options)
      try store.put(Data("v".utf8), forKey: "k")
      try store.close()
      #expect(throws: CaskError.wrongCredentialType) { try CaskStore(path: keyed, password: "pw", options: options) }
      #expect(throws: CaskError.wrongPassword) {
        try CaskStore(path: keyed, keys: try RNCryptor.Keys.random(), options: options)
      }
      let reopened = try CaskStore(path: keyed, keys: keys, options: options)
      #expect(try reopened.get("k") == Data("v".utf8))
      try reopened.close()

      let protected = directory.file("password.cask")
      try makeStore(protected)
      #expect(throws: CaskError.wrongCredentialType) { try CaskStore(path: protected, keys: keys, options: options) }
    }
  }

  private func makeStore(_ path: String) throws {
    let store = try CaskStore(path: path, password: "pw", options: options)
    try store.put(Data("value".utf8), forKey: "key")
    try store.close()
  }

  /// Writes a version field and fixes the CRC that follows the checksummed bytes.
  private static func setVersion(_ version: UInt16, in bytes: inout Data, at offset: Int, checksummedLength: Int) {
    bytes[offset] = UInt8(version & 0xFF)
    bytes[offset + 1] = UInt8(version >> 8)
    let crc = CRC32C.checksum(bytes.prefix(checksummedLength))
    for index in 0..<4 { bytes[checksummedLength + index] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(index))) }
  }
}

import Foundation
import RNCryptorCodec
import Testing

/// A version other than 3 or an options byte other than 0 or 1 is refused with an error that
/// names the byte, by every entry point, before any key is derived. Prevents a v2 or future
/// message being read with v3 rules.
@Suite("Version and options bytes")
struct HeaderErrorTests {
  /// A valid password message with byte `offset` replaced by `value`.
  private func passwordMessage(settingByte offset: Int, to value: UInt8) throws -> Data {
    var message = try RNCryptor.encrypt(Data("header".utf8), passwordKeys: Fixture.passwordKeys())
    message[offset] = value
    return message
  }

  /// Every way to decrypt `message`, by name.
  private func allEntryPoints(_ message: Data) throws -> [(String, () throws -> Data)] {
    let keys = try Fixture.keys()
    let passwordKeys = try Fixture.passwordKeys()
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    return [
      ("decrypt(keys:)", { try RNCryptor.decrypt(message, keys: keys) }),
      ("decrypt(password:)", { try RNCryptor.decrypt(message, password: Fixture.password) }),
      ("decrypt(passwordKeys:)", { try RNCryptor.decrypt(message, passwordKeys: passwordKeys) }),
      ("PasswordKeyCache.decrypt", { try cache.decrypt(message) }),
      ("Decryptor(keys:)", { try RNCryptor.Decryptor(keys: keys).update(message) }),
      ("Decryptor(password:)", { try RNCryptor.Decryptor(password: Fixture.password).update(message) }),
      ("Decryptor(passwordKeyCache:)", { try RNCryptor.Decryptor(passwordKeyCache: cache).update(message) }),
      (
        "Decryptor, byte by byte",
        {
          try stream(
            message, through: RNCryptor.Decryptor(keys: keys), chunkLengths: Array(repeating: 1, count: message.count))
        }
      ),
    ]
  }

  @Test("version bytes other than 3 give .unknownVersion", arguments: [0, 2, 4, 255] as [UInt8])
  func unknownVersion(version: UInt8) throws {
    let message = try passwordMessage(settingByte: 0, to: version)
    #expect(throws: RNCryptor.Error.unknownVersion(version)) { try RNCryptor.Format.credentialType(of: message) }
    for (name, decrypt) in try allEntryPoints(message) {
      #expect(throws: RNCryptor.Error.unknownVersion(version), "\(name)") { try decrypt() }
    }
  }

  @Test("options bytes other than 0 and 1 give .unknownOptions", arguments: [2, 3, 0x80] as [UInt8])
  func unknownOptions(options: UInt8) throws {
    let message = try passwordMessage(settingByte: 1, to: options)
    #expect(throws: RNCryptor.Error.unknownOptions(options)) { try RNCryptor.Format.credentialType(of: message) }
    for (name, decrypt) in try allEntryPoints(message) {
      #expect(throws: RNCryptor.Error.unknownOptions(options), "\(name)") { try decrypt() }
    }
  }

  @Test("the version is checked before the options")
  func versionFirst() throws {
    var message = try passwordMessage(settingByte: 0, to: 2)
    message[1] = 9
    #expect(throws: RNCryptor.Error.unknownVersion(2)) { try RNCryptor.decrypt(message, keys: Fixture.keys()) }
  }
}

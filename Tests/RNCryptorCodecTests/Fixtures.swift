import Foundation
import RNCryptorCodec

/// Fixed credentials shared by the codec tests.
///
/// The password keys are derived once per test process, so property loops that write password
/// messages do not run PBKDF2 on every iteration.
enum Fixture {
  static let password = "fixture password \u{2713}"
  static let encryptionKey = Data((0..<32).map { UInt8($0) })
  static let hmacKey = Data((0..<32).map { UInt8(0xC0 + $0) })
  static let encryptionSalt = Data([0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18])
  static let hmacSalt = Data([0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28])

  /// Raw keys for key messages.
  static func keys() throws -> RNCryptor.Keys {
    try RNCryptor.Keys(encryptionKey: encryptionKey, hmacKey: hmacKey)
  }

  /// Other raw keys, for "wrong key" checks.
  static func otherKeys() throws -> RNCryptor.Keys {
    try RNCryptor.Keys(encryptionKey: Data(encryptionKey.reversed()), hmacKey: Data(hmacKey.reversed()))
  }

  private static let derived = Result {
    try RNCryptor.PasswordKeys(password: password, encryptionSalt: encryptionSalt, hmacSalt: hmacSalt)
  }

  /// Keys derived from `password` for the fixed salt pair (two PBKDF2 runs, once per process).
  static func passwordKeys() throws -> RNCryptor.PasswordKeys {
    try derived.get()
  }
}

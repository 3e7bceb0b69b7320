import Foundation
import RNCryptorCodec
import Testing

/// Passwords are their UTF-8 bytes, as in every other RNCryptor implementation. Prevents a
/// password that is mangled (UTF-16, truncated at a multibyte scalar, normalised) and so opens
/// nothing written elsewhere.
@Suite("Multibyte passwords")
struct PasswordEncodingTests {
  static let passwords = ["密码是一只猫", "🔐🦄 key", "Zażółć gęślą jaźń", "e\u{301}"]

  @Test("Chinese, emoji and accented passwords round-trip, one-shot and streaming", arguments: passwords)
  func roundTrip(password: String) throws {
    let plaintext = Data("multibyte: \(password)".utf8)
    let message = try RNCryptor.encrypt(plaintext, password: password)
    #expect(try RNCryptor.decrypt(message, password: password) == plaintext)
    let decrypted = try stream(
      message, through: RNCryptor.Decryptor(password: password), chunkLengths: [1, 2, 3, message.count - 6])
    #expect(decrypted == plaintext)
  }

  @Test("a String password and its UTF-8 bytes derive the same keys", arguments: passwords)
  func utf8Bytes(password: String) throws {
    let fromString = try RNCryptor.Keys(
      password: password, encryptionSalt: Fixture.encryptionSalt, hmacSalt: Fixture.hmacSalt)
    let fromBytes = try RNCryptor.Keys(
      password: SecureBytes(Array(password.utf8)), encryptionSalt: Fixture.encryptionSalt, hmacSalt: Fixture.hmacSalt)
    #expect(fromString.encryptionKey.constantTimeEquals(fromBytes.encryptionKey))
    #expect(fromString.hmacKey.constantTimeEquals(fromBytes.hmacKey))
  }

  @Test("canonically equal passwords with different UTF-8 bytes are different passwords")
  func noNormalisation() throws {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"
    #expect(composed == decomposed)  // Swift says equal; the bytes differ.
    let message = try RNCryptor.encrypt(Data("menu".utf8), password: composed)
    #expect(throws: RNCryptor.Error.authenticationFailed) { try RNCryptor.decrypt(message, password: decomposed) }
  }
}

import Foundation
import RNCryptorCodec
import Testing

/// The wrong kind or shape of credential is refused with its own error before any decryption,
/// and a wrong password or key fails authentication. Prevents a key message being "decrypted"
/// with a password-derived key (or the reverse), and keys or salts of the wrong size reaching
/// libcrypto.
@Suite("Credential errors")
struct CredentialErrorTests {
  @Test("a key message given to every password entry point gives .wrongCredentialType(.keys)")
  func keyMessageToPassword() throws {
    let message = try RNCryptor.encrypt(Data("key message".utf8), keys: Fixture.keys())
    let expected = RNCryptor.Error.wrongCredentialType(message: .keys)
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    #expect(throws: expected) { try RNCryptor.decrypt(message, password: Fixture.password) }
    #expect(throws: expected) { try RNCryptor.decrypt(message, passwordKeys: Fixture.passwordKeys()) }
    #expect(throws: expected) { try cache.decrypt(message) }
    #expect(throws: expected) { try RNCryptor.passwordSalts(of: message) }
    // Streaming refuses as soon as the options byte has arrived, before any key derivation.
    #expect(throws: expected) { try RNCryptor.Decryptor(password: Fixture.password).update(message.prefix(2)) }
    #expect(throws: expected) { try RNCryptor.Decryptor(passwordKeyCache: cache).update(message) }
    #expect(throws: expected) {
      try stream(message, through: RNCryptor.Decryptor(password: Fixture.password), chunkLengths: [1, 1, 64])
    }
  }

  @Test("a password message given to every key entry point gives .wrongCredentialType(.password)")
  func passwordMessageToKeys() throws {
    let message = try RNCryptor.encrypt(Data("password message".utf8), passwordKeys: Fixture.passwordKeys())
    let expected = RNCryptor.Error.wrongCredentialType(message: .password)
    let keys = try Fixture.keys()
    #expect(throws: expected) { try RNCryptor.decrypt(message, keys: keys) }
    #expect(throws: expected) { try RNCryptor.Decryptor(keys: keys).update(message.prefix(2)) }
    #expect(throws: expected) {
      try stream(message, through: RNCryptor.Decryptor(keys: keys), chunkLengths: [1, message.count - 1])
    }
  }

  @Test("an empty password gives .emptyPassword wherever a password is taken")
  func emptyPassword() throws {
    let expected = RNCryptor.Error.emptyPassword
    let message = try RNCryptor.encrypt(Data("x".utf8), passwordKeys: Fixture.passwordKeys())
    #expect(throws: expected) { try RNCryptor.encrypt(Data("x".utf8), password: "") }
    #expect(throws: expected) { try RNCryptor.decrypt(message, password: "") }
    #expect(throws: expected) { try RNCryptor.Encryptor(password: "") }
    #expect(throws: expected) {
      try stream(message, through: RNCryptor.Decryptor(password: ""), chunkLengths: [3, message.count - 3])
    }
    #expect(throws: expected) { try RNCryptor.PasswordKeys(password: "") }
    #expect(throws: expected) {
      try RNCryptor.Keys(password: "", encryptionSalt: Fixture.encryptionSalt, hmacSalt: Fixture.hmacSalt)
    }
    #expect(throws: expected) { try RNCryptor.PasswordKeyCache(password: "") }
    #expect(throws: expected) { try RNCryptor.PasswordKeyCache(password: SecureBytes([UInt8]())) }
  }

  @Test("keys that are not 32 bytes give .invalidKeyLength with the wrong length", arguments: [0, 16, 31, 33, 64])
  func invalidKeyLength(length: Int) throws {
    let wrong = Data(repeating: 0x5C, count: length)
    #expect(throws: RNCryptor.Error.invalidKeyLength(length)) {
      try RNCryptor.Keys(encryptionKey: wrong, hmacKey: Fixture.hmacKey)
    }
    #expect(throws: RNCryptor.Error.invalidKeyLength(length)) {
      try RNCryptor.Keys(encryptionKey: Fixture.encryptionKey, hmacKey: wrong)
    }
    #expect(throws: RNCryptor.Error.invalidKeyLength(length)) {
      try RNCryptor.Keys(encryptionKey: SecureBytes(wrong), hmacKey: SecureBytes(Fixture.hmacKey))
    }
  }

  @Test("salts that are not 8 bytes give .invalidSaltLength with the wrong length", arguments: [0, 1, 7, 9, 16])
  func invalidSaltLength(length: Int) throws {
    let wrong = Data(repeating: 0x5A, count: length)
    let expected = RNCryptor.Error.invalidSaltLength(length)
    #expect(throws: expected) {
      try RNCryptor.Keys(password: Fixture.password, encryptionSalt: wrong, hmacSalt: Fixture.hmacSalt)
    }
    #expect(throws: expected) {
      try RNCryptor.Keys(password: Fixture.password, encryptionSalt: Fixture.encryptionSalt, hmacSalt: wrong)
    }
    #expect(throws: expected) {
      try RNCryptor.PasswordKeys(password: Fixture.password, encryptionSalt: wrong, hmacSalt: Fixture.hmacSalt)
    }
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    #expect(throws: expected) { try cache.keys(encryptionSalt: Fixture.encryptionSalt, hmacSalt: wrong) }
    #expect(throws: expected) {
      try RNCryptor.seal(Data(), keys: Fixture.keys(), salts: (wrong, Fixture.hmacSalt))
    }
  }

  @Test("a wrong password gives .authenticationFailed, one-shot, cache and streaming")
  func wrongPassword() throws {
    let message = try RNCryptor.encrypt(Data("for the right password".utf8), passwordKeys: Fixture.passwordKeys())
    let wrong = Fixture.password + "!"
    let expected = RNCryptor.Error.authenticationFailed
    #expect(throws: expected) { try RNCryptor.decrypt(message, password: wrong) }
    #expect(throws: expected) { try RNCryptor.PasswordKeyCache(password: wrong).decrypt(message) }
    let decryptor = RNCryptor.Decryptor(password: wrong)
    // Nothing is reported before the HMAC has been checked...
    _ = try decryptor.update(message)
    // ...and then authentication fails.
    #expect(throws: expected) { try decryptor.finalize() }
  }

  @Test("wrong keys give .authenticationFailed, one-shot and streaming")
  func wrongKeys() throws {
    let message = try RNCryptor.encrypt(Data("for the right keys".utf8), keys: Fixture.keys())
    let other = try Fixture.otherKeys()
    #expect(throws: RNCryptor.Error.authenticationFailed) { try RNCryptor.decrypt(message, keys: other) }
    #expect(throws: RNCryptor.Error.authenticationFailed) {
      try stream(message, through: RNCryptor.Decryptor(keys: other), chunkLengths: [message.count])
    }
    // Right encryption key, wrong HMAC key: still refused.
    let halfRight = try RNCryptor.Keys(encryptionKey: Fixture.encryptionKey, hmacKey: Data(Fixture.hmacKey.reversed()))
    #expect(throws: RNCryptor.Error.authenticationFailed) { try RNCryptor.decrypt(message, keys: halfRight) }
  }
}

import Foundation
import Testing

@testable import RNCryptorCodec

@Suite("Official RNCryptor v3 vectors")
struct VectorTests {
  @Test("all 6 KDF vectors derive the published key")
  func kdf() throws {
    let records = try loadVectors("kdf").filter { $0.text("version") == "3" }
    #expect(records.count == 6)
    for record in records {
      let password = try #require(record.text("password"))
      let salt = try record.hex("salt_hex")
      let keys = try RNCryptor.Keys(password: password, encryptionSalt: salt, hmacSalt: salt)
      let derived = keys.encryptionKey.withUnsafeBytes { Data($0) }
      #expect(derived == (try record.hex("key_hex")), "\(record.text("title") ?? "?")")
    }
  }

  @Test("all 4 key vectors encrypt to the published message and decrypt back")
  func keyMessages() throws {
    let records = try loadVectors("key").filter { $0.text("version") == "3" }
    #expect(records.count == 4)
    for record in records {
      let title = record.text("title") ?? "?"
      let keys = try RNCryptor.Keys(encryptionKey: record.hex("enc_key_hex"), hmacKey: record.hex("hmac_key_hex"))
      let plaintext = try record.hex("plaintext_hex")
      let expected = try record.hex("ciphertext_hex")
      let sealed = try RNCryptor.seal(plaintext, keys: keys, salts: nil, iv: record.hex("iv_hex"))
      #expect(sealed == expected, "\(title)")
      #expect(try RNCryptor.decrypt(expected, keys: keys) == plaintext, "\(title)")
    }
  }

  @Test("all 6 password vectors encrypt to the published message and decrypt back")
  func passwordMessages() throws {
    let records = try loadVectors("password").filter { $0.text("version") == "3" }
    #expect(records.count == 6)
    for record in records {
      let title = record.text("title") ?? "?"
      let password = try #require(record.text("password"))
      let keys = try RNCryptor.PasswordKeys(
        password: password, encryptionSalt: record.hex("enc_salt_hex"), hmacSalt: record.hex("hmac_salt_hex"))
      let plaintext = try record.hex("plaintext_hex")
      let expected = try record.hex("ciphertext_hex")
      let sealed = try RNCryptor.seal(
        plaintext, keys: keys.keys, salts: (keys.encryptionSalt, keys.hmacSalt), iv: record.hex("iv_hex"))
      #expect(sealed == expected, "\(title)")
      #expect(try RNCryptor.decrypt(expected, password: password) == plaintext, "\(title)")
    }
  }
}

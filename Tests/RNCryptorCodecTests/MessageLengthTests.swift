import Foundation
import RNCryptorCodec
import Testing

/// Plaintexts around one AES block: PKCS#7 always adds 1...16 bytes, so 15 bytes take one
/// block and 16 or 17 take two. Prevents an off-by-one in padding or in the length formula
/// that other implementations rely on.
@Suite("Message lengths at the block boundary")
struct MessageLengthTests {
  /// (plaintext length, key message length, password message length), worked out by hand:
  /// header (18 or 34) + ciphertext + 32.
  static let cases: [(plaintext: Int, key: Int, password: Int)] = [
    (0, 66, 82), (1, 66, 82), (15, 66, 82), (16, 82, 98), (17, 82, 98), (31, 82, 98), (32, 98, 114),
  ]

  @Test("Format.messageLength matches the lengths worked out by hand")
  func formula() {
    for (plaintext, key, password) in Self.cases {
      #expect(RNCryptor.Format.messageLength(plaintextLength: plaintext, type: .keys) == key, "\(plaintext) bytes")
      #expect(
        RNCryptor.Format.messageLength(plaintextLength: plaintext, type: .password) == password, "\(plaintext) bytes")
    }
    #expect(RNCryptor.Format.minimumLength(.keys) == 66)
    #expect(RNCryptor.Format.minimumLength(.password) == 82)
  }

  @Test("empty, 15-, 16- and 17-byte plaintexts: one-shot messages have the formula's length and round-trip")
  func oneShot() throws {
    let keys = try Fixture.keys()
    let passwordKeys = try Fixture.passwordKeys()
    for length in [0, 15, 16, 17] {
      let plaintext = Data((0..<length).map { UInt8(0x61 + $0 % 26) })
      let keyMessage = try RNCryptor.encrypt(plaintext, keys: keys)
      let passwordMessage = try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys)
      #expect(keyMessage.count == RNCryptor.Format.messageLength(plaintextLength: length, type: .keys))
      #expect(passwordMessage.count == RNCryptor.Format.messageLength(plaintextLength: length, type: .password))
      #expect(try RNCryptor.decrypt(keyMessage, keys: keys) == plaintext, "\(length) bytes")
      #expect(try RNCryptor.decrypt(passwordMessage, passwordKeys: passwordKeys) == plaintext, "\(length) bytes")
    }
  }

  @Test("empty, 15-, 16- and 17-byte plaintexts: streamed messages have the same lengths and round-trip")
  func streaming() throws {
    let keys = try Fixture.keys()
    for length in [0, 15, 16, 17] {
      let plaintext = Data(repeating: 0x7A, count: length)
      let encryptor = try RNCryptor.Encryptor(keys: keys)
      // No update at all for the empty plaintext: finalize alone writes the whole message.
      let message = try stream(plaintext, through: encryptor, chunkLengths: length == 0 ? [] : [length])
      #expect(message.count == RNCryptor.Format.messageLength(plaintextLength: length, type: .keys))
      let decrypted = try stream(message, through: RNCryptor.Decryptor(keys: keys), chunkLengths: [message.count])
      #expect(decrypted == plaintext, "\(length) bytes")
    }
  }

  @Test("an empty plaintext still makes a full one-block message that decrypts to empty")
  func emptyPlaintext() throws {
    let message = try RNCryptor.encrypt(Data(), password: Fixture.password)
    #expect(message.count == 82)
    #expect(try RNCryptor.decrypt(message, password: Fixture.password) == Data())
    let keys = try Fixture.keys()
    let keyMessage = try RNCryptor.encrypt(Data(), keys: keys)
    #expect(keyMessage.count == 66)
    #expect(try RNCryptor.decrypt(keyMessage, keys: keys).isEmpty)
    #expect(try RNCryptor.Decryptor(keys: keys).update(Data()).isEmpty)
  }

  @Test("a message inside a larger buffer (a Data slice) decrypts")
  func sliceInput() throws {
    let keys = try Fixture.keys()
    let passwordKeys = try Fixture.passwordKeys()
    let plaintext = Data("sliced".utf8)
    let keyMessage = try RNCryptor.encrypt(plaintext, keys: keys)
    let passwordMessage = try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys)
    let buffer = Data([9, 9, 9]) + keyMessage + passwordMessage + Data([9])
    let keySlice = buffer[3..<3 + keyMessage.count]
    let passwordSlice = buffer[3 + keyMessage.count..<3 + keyMessage.count + passwordMessage.count]
    #expect(try RNCryptor.decrypt(keySlice, keys: keys) == plaintext)
    #expect(try RNCryptor.decrypt(passwordSlice, passwordKeys: passwordKeys) == plaintext)
    #expect(try RNCryptor.passwordSalts(of: passwordSlice).encryption == Fixture.encryptionSalt)
    #expect(try RNCryptor.passwordSalts(of: passwordSlice).hmac == Fixture.hmacSalt)
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

/// Property: however the input is cut into chunks (empty and one-byte chunks included), the
/// streaming encryptor and decryptor agree with the one-shot functions, in both directions.
/// Prevents bugs at chunk edges that fall inside the header, a cipher block or the HMAC.
@Suite("Streaming agrees with one-shot for random chunk boundaries")
struct StreamingPropertyTests {
  @Test("key messages: streamed and one-shot encryption decrypt either way")
  func keyMessages() throws {
    var random = SeededRandom.make(test: "StreamingPropertyTests.keyMessages")
    let keys = try Fixture.keys()
    for iteration in 0..<testIterations(30) {
      let plaintext = random.bytes(iteration == 0 ? 0 : RandomInputs.plaintextLength(using: &random))
      let label = Comment(rawValue: "iteration \(iteration), \(plaintext.count) bytes")

      let streamed = try stream(
        plaintext, through: RNCryptor.Encryptor(keys: keys),
        chunkLengths: RandomInputs.chunkLengths(total: plaintext.count, using: &random))
      // Same bytes as the one-shot encoder given the same IV.
      let iv = streamed.dropFirst(2).prefix(RNCryptor.Format.ivLength)
      #expect(try streamed == RNCryptor.seal(plaintext, keys: keys, salts: nil, iv: Data(iv)), label)
      #expect(try RNCryptor.decrypt(streamed, keys: keys) == plaintext, label)

      let oneShot = try RNCryptor.encrypt(plaintext, keys: keys)
      for message in [oneShot, streamed] {
        let decrypted = try stream(
          message, through: RNCryptor.Decryptor(keys: keys),
          chunkLengths: RandomInputs.chunkLengths(total: message.count, using: &random))
        #expect(decrypted == plaintext, label)
      }
    }
  }

  @Test("password messages: streamed and one-shot encryption decrypt either way")
  func passwordMessages() throws {
    var random = SeededRandom.make(test: "StreamingPropertyTests.passwordMessages")
    let passwordKeys = try Fixture.passwordKeys()
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    for iteration in 0..<testIterations(30) {
      let plaintext = random.bytes(iteration == 0 ? 0 : RandomInputs.plaintextLength(using: &random))
      let label = Comment(rawValue: "iteration \(iteration), \(plaintext.count) bytes")

      let streamed = try stream(
        plaintext, through: RNCryptor.Encryptor(passwordKeys: passwordKeys),
        chunkLengths: RandomInputs.chunkLengths(total: plaintext.count, using: &random))
      let iv = streamed.dropFirst(RNCryptor.Format.passwordHeaderLength - RNCryptor.Format.ivLength)
        .prefix(RNCryptor.Format.ivLength)
      let sealed = try RNCryptor.seal(
        plaintext, keys: passwordKeys.keys, salts: (Fixture.encryptionSalt, Fixture.hmacSalt), iv: Data(iv))
      #expect(streamed == sealed, label)
      #expect(try RNCryptor.decrypt(streamed, passwordKeys: passwordKeys) == plaintext, label)

      let oneShot = try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys)
      for message in [oneShot, streamed] {
        let decrypted = try stream(
          message, through: RNCryptor.Decryptor(passwordKeyCache: cache),
          chunkLengths: RandomInputs.chunkLengths(total: message.count, using: &random))
        #expect(decrypted == plaintext, label)
      }
    }
  }

  @Test("streaming with a password runs the key derivation and agrees with one-shot")
  func realPasswordDerivation() throws {
    var random = SeededRandom.make(test: "StreamingPropertyTests.realPasswordDerivation")
    for _ in 0..<testIterations(2) {
      let password = RandomInputs.password(using: &random)
      let plaintext = random.bytes(Int.random(in: 0...10_000, using: &random))
      let streamed = try stream(
        plaintext, through: RNCryptor.Encryptor(password: password),
        chunkLengths: RandomInputs.chunkLengths(total: plaintext.count, using: &random))
      #expect(try RNCryptor.decrypt(streamed, password: password) == plaintext)
      let oneShot = try RNCryptor.encrypt(plaintext, password: password)
      let decrypted = try stream(
        oneShot, through: RNCryptor.Decryptor(password: password),
        chunkLengths: RandomInputs.chunkLengths(total: oneShot.count, using: &random))
      #expect(decrypted == plaintext)
    }
  }

  @Test("one-byte chunks all the way through, header and HMAC included")
  func oneByteChunks() throws {
    var random = SeededRandom.make(test: "StreamingPropertyTests.oneByteChunks")
    let keys = try Fixture.keys()
    for length in [0, 1, 15, 16, 17, 33, 100] {
      let plaintext = random.bytes(length)
      let streamed = try stream(
        plaintext, through: RNCryptor.Encryptor(keys: keys), chunkLengths: Array(repeating: 1, count: length))
      #expect(try RNCryptor.decrypt(streamed, keys: keys) == plaintext, "length \(length)")
      let decrypted = try stream(
        streamed, through: RNCryptor.Decryptor(keys: keys), chunkLengths: Array(repeating: 1, count: streamed.count))
      #expect(decrypted == plaintext, "length \(length)")
    }
  }

  @Test("update holds back the last 32 bytes seen, which may be the HMAC")
  func decryptorHoldsBackTail() throws {
    var random = SeededRandom.make(test: "StreamingPropertyTests.decryptorHoldsBackTail")
    let keys = try Fixture.keys()
    let plaintext = random.bytes(1_000)
    let message = try RNCryptor.encrypt(plaintext, keys: keys)
    let decryptor = RNCryptor.Decryptor(keys: keys)
    // Everything but the HMAC: the decryptor cannot know yet where the ciphertext ends.
    let beforeHMAC = try decryptor.update(message.prefix(message.count - RNCryptor.Format.hmacLength))
    #expect(beforeHMAC.count < plaintext.count)
    #expect(beforeHMAC == plaintext.prefix(beforeHMAC.count))
    let rest = try decryptor.update(message.suffix(RNCryptor.Format.hmacLength))
    let last = try decryptor.finalize()
    #expect(beforeHMAC + rest + last == plaintext)
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

/// Property: for any plaintext of 0...1 MiB, decrypt(encrypt(p)) == p, and the message has
/// the length and header the format prescribes. Prevents padding and length bugs at block
/// boundaries and for large inputs.
@Suite("Round trips over random plaintext lengths")
struct RoundTripPropertyTests {
  /// Random lengths, plus both ends of the range on every run.
  private func lengths(using random: inout SeededRandom, count: Int) -> [Int] {
    [0, RandomInputs.maximumPlaintextLength] + (0..<count).map { _ in RandomInputs.plaintextLength(using: &random) }
  }

  @Test("key messages round-trip for lengths 0...1 MiB")
  func keyMessages() throws {
    var random = SeededRandom.make(test: "RoundTripPropertyTests.keyMessages")
    let keys = try Fixture.keys()
    for length in lengths(using: &random, count: testIterations(40)) {
      let plaintext = random.bytes(length)
      let message = try RNCryptor.encrypt(plaintext, keys: keys)
      #expect(message.count == RNCryptor.Format.messageLength(plaintextLength: length, type: .keys), "length \(length)")
      #expect(Array(message.prefix(2)) == [3, 0], "length \(length)")
      #expect(try RNCryptor.decrypt(message, keys: keys) == plaintext, "length \(length)")
    }
  }

  @Test("password messages written with derived keys round-trip for lengths 0...1 MiB")
  func passwordMessages() throws {
    var random = SeededRandom.make(test: "RoundTripPropertyTests.passwordMessages")
    let passwordKeys = try Fixture.passwordKeys()
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    let salts = Fixture.encryptionSalt + Fixture.hmacSalt
    for length in lengths(using: &random, count: testIterations(40)) {
      let plaintext = random.bytes(length)
      let message = try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys)
      #expect(
        message.count == RNCryptor.Format.messageLength(plaintextLength: length, type: .password), "length \(length)")
      #expect(Array(message.prefix(2)) == [3, 1], "length \(length)")
      #expect(message.dropFirst(2).prefix(16) == salts, "length \(length)")
      // Alternate the two PBKDF2-free ways in.
      let decrypted =
        Bool.random(using: &random)
        ? try RNCryptor.decrypt(message, passwordKeys: passwordKeys) : try cache.decrypt(message)
      #expect(decrypted == plaintext, "length \(length)")
    }
  }

  @Test("encrypt(_:password:) round-trips with random passwords (real PBKDF2)")
  func realPasswordDerivation() throws {
    var random = SeededRandom.make(test: "RoundTripPropertyTests.realPasswordDerivation")
    for _ in 0..<testIterations(3) {
      let password = RandomInputs.password(using: &random)
      let plaintext = random.bytes(Int.random(in: 0...4_096, using: &random))
      let first = try RNCryptor.encrypt(plaintext, password: password)
      let second = try RNCryptor.encrypt(plaintext, password: password)
      #expect(first.dropFirst(2).prefix(16) != second.dropFirst(2).prefix(16), "each message gets fresh salts")
      #expect(try RNCryptor.decrypt(first, password: password) == plaintext)
      #expect(try RNCryptor.decrypt(second, password: password) == plaintext)
    }
  }

  @Test("encrypting the same plaintext twice gives different messages (fresh IV)")
  func freshIV() throws {
    let keys = try Fixture.keys()
    let passwordKeys = try Fixture.passwordKeys()
    let plaintext = Data(repeating: 0x41, count: 48)
    let keyMessages = try (0..<2).map { _ in try RNCryptor.encrypt(plaintext, keys: keys) }
    let passwordMessages = try (0..<2).map { _ in try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys) }
    let keyHeader = RNCryptor.Format.keyHeaderLength
    let passwordHeader = RNCryptor.Format.passwordHeaderLength
    #expect(keyMessages[0][2..<keyHeader] != keyMessages[1][2..<keyHeader])
    #expect(passwordMessages[0][18..<passwordHeader] != passwordMessages[1][18..<passwordHeader])
    #expect(keyMessages[0].dropFirst(keyHeader) != keyMessages[1].dropFirst(keyHeader))
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

/// A message cut short at any length, or with bytes added, must fail with a clear
/// `RNCryptor.Error` (never a crash or an out-of-bounds read), the same one-shot and streaming.
/// Prevents a decrypt that trusts the length of its input, and a half-written message that
/// decrypts to a prefix of the plaintext.
@Suite("Truncated and extended messages are refused")
struct TruncationTests {
  /// The error for the first `length` bytes of a message of `type`. Lengths that still hold a
  /// header, at least one block and an HMAC-sized tail reach the HMAC check and fail it; all
  /// others are rejected by length. Below two bytes the type is unknown, so the minimum quoted
  /// is the smallest message of any kind.
  private func expectedError(length: Int, type: RNCryptor.CredentialType) -> RNCryptor.Error {
    guard length >= 2 else {
      return .messageTooShort(length: length, minimum: RNCryptor.Format.minimumLength(.keys))
    }
    let minimum = RNCryptor.Format.minimumLength(type)
    let ciphertext = length - RNCryptor.Format.headerLength(type) - RNCryptor.Format.hmacLength
    guard length >= minimum, ciphertext % RNCryptor.Format.blockLength == 0 else {
      return .messageTooShort(length: length, minimum: minimum)
    }
    return .authenticationFailed
  }

  @Test("key message: every truncation fails, one-shot and streaming")
  func keyMessage() throws {
    var random = SeededRandom.make(test: "TruncationTests.keyMessage")
    let keys = try Fixture.keys()
    for _ in 0..<testIterations(2) {
      let plaintext = random.bytes(Int.random(in: 0...80, using: &random))
      let message = try RNCryptor.encrypt(plaintext, keys: keys)
      var reachedHMAC = 0
      for length in 0..<message.count {
        let truncated = message.prefix(length)
        let expected = expectedError(length: length, type: .keys)
        if expected == .authenticationFailed { reachedHMAC += 1 }
        #expect(throws: expected, "length \(length) of \(message.count)") {
          try RNCryptor.decrypt(truncated, keys: keys)
        }
        let chunks = RandomInputs.chunkLengths(total: length, using: &random)
        #expect(throws: expected, "streaming, length \(length) of \(message.count)") {
          try stream(truncated, through: RNCryptor.Decryptor(keys: keys), chunkLengths: chunks)
        }
      }
      // Cutting whole blocks off a message of two or more blocks leaves a well-formed message.
      #expect(reachedHMAC == (message.count - RNCryptor.Format.minimumLength(.keys)) / 16)
    }
  }

  @Test("password message: every truncation fails, one-shot, cache and streaming")
  func passwordMessage() throws {
    var random = SeededRandom.make(test: "TruncationTests.passwordMessage")
    let passwordKeys = try Fixture.passwordKeys()
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password)
    for _ in 0..<testIterations(2) {
      let plaintext = random.bytes(Int.random(in: 0...80, using: &random))
      let message = try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys)
      for length in 0..<message.count {
        let truncated = message.prefix(length)
        let expected = expectedError(length: length, type: .password)
        #expect(throws: expected, "length \(length) of \(message.count)") {
          try RNCryptor.decrypt(truncated, passwordKeys: passwordKeys)
        }
        #expect(throws: expected, "cache, length \(length) of \(message.count)") { try cache.decrypt(truncated) }
        let chunks = RandomInputs.chunkLengths(total: length, using: &random)
        #expect(throws: expected, "streaming, length \(length) of \(message.count)") {
          try stream(truncated, through: RNCryptor.Decryptor(passwordKeyCache: cache), chunkLengths: chunks)
        }
      }
    }
  }

  @Test("password message: truncations at each field boundary fail with the password (real PBKDF2)")
  func passwordMessageWithPassword() throws {
    let message = try RNCryptor.encrypt(Data(repeating: 0x33, count: 40), passwordKeys: Fixture.passwordKeys())
    // Empty, inside each field of the header, header only, and one byte and one block short.
    for length in [0, 1, 2, 10, 18, 33, 34, 50, 81, message.count - 16, message.count - 1] {
      let truncated = message.prefix(length)
      let expected = expectedError(length: length, type: .password)
      #expect(throws: expected, "length \(length)") { try RNCryptor.decrypt(truncated, password: Fixture.password) }
      #expect(throws: expected, "streaming, length \(length)") {
        try stream(truncated, through: RNCryptor.Decryptor(password: Fixture.password), chunkLengths: [length])
      }
    }
  }

  @Test("bytes appended to a message are refused")
  func extendedMessage() throws {
    let keys = try Fixture.keys()
    let message = try RNCryptor.encrypt(Data(repeating: 0x44, count: 40), keys: keys)
    for extra in [1, 15, 16, 32, 33] {
      let extended = message + Data(repeating: 0, count: extra)
      let expected: RNCryptor.Error =
        extra % 16 == 0
        ? .authenticationFailed
        : .messageTooShort(length: extended.count, minimum: RNCryptor.Format.minimumLength(.keys))
      #expect(throws: expected, "\(extra) extra bytes") { try RNCryptor.decrypt(extended, keys: keys) }
      #expect(throws: expected, "streaming, \(extra) extra bytes") {
        try stream(extended, through: RNCryptor.Decryptor(keys: keys), chunkLengths: [extended.count])
      }
    }
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

/// Every single-bit change to a message must be refused: by the HMAC, or by the header check
/// when the bit is in the version or options byte. Prevents an unauthenticated byte (a header
/// field left out of the HMAC, say) and a decrypt that returns plaintext for a modified message.
@Suite("Every single-bit flip is refused")
struct BitFlipTests {
  /// The error a message of `type` must give after bit `bit` of byte `offset` is flipped.
  private func expectedError(offset: Int, bit: Int, type: RNCryptor.CredentialType) -> RNCryptor.Error {
    let mask = UInt8(1) << bit
    switch offset {
    case 0:
      return .unknownVersion(RNCryptor.Format.version ^ mask)
    case 1:
      let options = (type == .password ? RNCryptor.Format.passwordOptions : RNCryptor.Format.keyOptions) ^ mask
      switch options {
      // Bit 0 turns a password message into a key message and back: refused before any key is used.
      case RNCryptor.Format.keyOptions: return .wrongCredentialType(message: .keys)
      case RNCryptor.Format.passwordOptions: return .wrongCredentialType(message: .password)
      default: return .unknownOptions(options)
      }
    default:
      return .authenticationFailed
    }
  }

  /// Every (offset, bit) of a message of `count` bytes.
  private func allBits(of count: Int) -> [(offset: Int, bit: Int)] {
    (0..<count).flatMap { offset in (0..<8).map { (offset, $0) } }
  }

  private func flipped(_ message: Data, offset: Int, bit: Int) -> Data {
    var copy = message
    copy[offset] ^= UInt8(1) << bit
    return copy
  }

  @Test("key message: every bit flip fails, one-shot and streaming")
  func keyMessage() throws {
    var random = SeededRandom.make(test: "BitFlipTests.keyMessage")
    let keys = try Fixture.keys()
    for _ in 0..<testIterations(1) {
      let plaintext = random.bytes(Int.random(in: 0...40, using: &random))
      let message = try RNCryptor.encrypt(plaintext, keys: keys)
      #expect(try RNCryptor.decrypt(message, keys: keys) == plaintext)
      for (offset, bit) in allBits(of: message.count) {
        let damaged = flipped(message, offset: offset, bit: bit)
        let expected = expectedError(offset: offset, bit: bit, type: .keys)
        #expect(throws: expected, "byte \(offset) bit \(bit)") { try RNCryptor.decrypt(damaged, keys: keys) }
        let chunks = RandomInputs.chunkLengths(total: damaged.count, using: &random)
        #expect(throws: expected, "streaming, byte \(offset) bit \(bit)") {
          try stream(damaged, through: RNCryptor.Decryptor(keys: keys), chunkLengths: chunks)
        }
      }
    }
  }

  @Test("password message: every bit flip fails, one-shot and streaming, salts included")
  func passwordMessage() throws {
    var random = SeededRandom.make(test: "BitFlipTests.passwordMessage")
    let passwordKeys = try Fixture.passwordKeys()
    // A flipped salt bit means a new salt pair (two PBKDF2 runs); one cache shared by the
    // one-shot and streaming checks derives each pair once.
    let cache = try RNCryptor.PasswordKeyCache(password: Fixture.password, capacity: 512)
    for _ in 0..<testIterations(1) {
      let plaintext = random.bytes(Int.random(in: 0...40, using: &random))
      let message = try RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys)
      #expect(try cache.decrypt(message) == plaintext)
      for (offset, bit) in allBits(of: message.count) {
        let damaged = flipped(message, offset: offset, bit: bit)
        let expected = expectedError(offset: offset, bit: bit, type: .password)
        #expect(throws: expected, "byte \(offset) bit \(bit)") {
          try RNCryptor.decrypt(damaged, passwordKeys: passwordKeys)
        }
        #expect(throws: expected, "cache, byte \(offset) bit \(bit)") { try cache.decrypt(damaged) }
        let chunks = RandomInputs.chunkLengths(total: damaged.count, using: &random)
        #expect(throws: expected, "streaming, byte \(offset) bit \(bit)") {
          try stream(damaged, through: RNCryptor.Decryptor(passwordKeyCache: cache), chunkLengths: chunks)
        }
      }
    }
  }

  @Test("password message: sampled bit flips fail with the plain password functions (real PBKDF2)")
  func passwordMessageWithPassword() throws {
    var random = SeededRandom.make(test: "BitFlipTests.passwordMessageWithPassword")
    let passwordKeys = try Fixture.passwordKeys()
    let message = try RNCryptor.encrypt(random.bytes(20), passwordKeys: passwordKeys)
    // Always the first salt byte, the IV, the ciphertext and the HMAC; then random bits.
    var targets = [(2, 0), (18, 7), (RNCryptor.Format.passwordHeaderLength, 3), (message.count - 1, 0)]
    for _ in 0..<testIterations(4) {
      targets.append((Int.random(in: 0..<message.count, using: &random), Int.random(in: 0..<8, using: &random)))
    }
    for (offset, bit) in targets {
      let damaged = flipped(message, offset: offset, bit: bit)
      let expected = expectedError(offset: offset, bit: bit, type: .password)
      #expect(throws: expected, "byte \(offset) bit \(bit)") {
        try RNCryptor.decrypt(damaged, password: Fixture.password)
      }
      #expect(throws: expected, "streaming, byte \(offset) bit \(bit)") {
        try stream(
          damaged, through: RNCryptor.Decryptor(password: Fixture.password), chunkLengths: [damaged.count])
      }
    }
  }
}

import Foundation
import Testing

@testable import RNCryptorCodec

/// A key message whose only block decrypts to 16 zero bytes, so its last byte (the PKCS#7
/// pad length) is 0, which is invalid, with a correct HMAC over header and ciphertext: what
/// a faulty encryptor holding the right keys would write.
func badlyPaddedMessage(keys: RNCryptor.Keys) throws -> Data {
  let iv = Data(repeating: 0x42, count: RNCryptor.Format.ivLength)
  // Sealing 16 zero bytes gives two blocks: the zeros, then a block of padding. Keep the first.
  let sealed = try RNCryptor.seal(Data(count: 16), keys: keys, salts: nil, iv: iv)
  var message = sealed.prefix(RNCryptor.Format.keyHeaderLength + RNCryptor.Format.blockLength)
  var mac = Data(count: RNCryptor.Format.hmacLength)
  let running = try keys.hmac.start()
  try message.withUnsafeBytes { try running.update($0) }
  try mac.withUnsafeMutableBytes { try running.finish(into: $0.baseAddress!) }
  message.append(mac)
  return Data(message)
}

/// The HMAC is checked before the padding, and a message that authenticates but whose padding
/// is invalid gives `.badPadding`, not garbage plaintext or a crash. Prevents a padding oracle
/// (padding errors reported for unauthenticated input) and a silent wrong-length plaintext.
@Suite("Padding is checked after the HMAC")
struct PaddingTests {
  @Test("an authenticated message with invalid padding gives .badPadding, one-shot and streaming")
  func badPadding() throws {
    let keys = try Fixture.keys()
    let message = try badlyPaddedMessage(keys: keys)
    #expect(message.count == RNCryptor.Format.minimumLength(.keys))
    #expect(throws: RNCryptor.Error.badPadding) { try RNCryptor.decrypt(message, keys: keys) }
    #expect(throws: RNCryptor.Error.badPadding) {
      try stream(message, through: RNCryptor.Decryptor(keys: keys), chunkLengths: [5, 20, message.count - 25])
    }
  }

  @Test("the same message with other keys gives .authenticationFailed: padding is never judged first")
  func hmacBeforePadding() throws {
    let message = try badlyPaddedMessage(keys: Fixture.keys())
    let other = try Fixture.otherKeys()
    #expect(throws: RNCryptor.Error.authenticationFailed) { try RNCryptor.decrypt(message, keys: other) }
    #expect(throws: RNCryptor.Error.authenticationFailed) {
      try stream(message, through: RNCryptor.Decryptor(keys: other), chunkLengths: [message.count])
    }
  }
}

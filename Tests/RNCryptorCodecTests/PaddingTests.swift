import Foundation
import Testing

@testable import RNCryptorCodec

/// A key message whose only block decrypts to `block` (16 zero bytes by default, so its last
/// byte, the PKCS#7 pad length, is 0, which is invalid), with a correct HMAC over header and
/// ciphertext: what a faulty encryptor holding the right keys would write.
func badlyPaddedMessage(keys: RNCryptor.Keys, block: Data = Data(count: 16)) throws -> Data {
  let iv = Data(repeating: 0x42, count: RNCryptor.Format.ivLength)
  // Sealing 16 bytes gives two blocks: those bytes, then a block of padding. Keep the first.
  let sealed = try RNCryptor.seal(block, keys: keys, salts: nil, iv: iv)
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

  @Test(
    "every way a last block can be padded is judged as OpenSSL's streaming decryption judges it, by each open",
    arguments: [
      [UInt8](repeating: 0, count: 16), [UInt8](repeating: 16, count: 16), [UInt8](repeating: 0x20, count: 16),
      [UInt8](repeating: 7, count: 15) + [1], [UInt8](repeating: 7, count: 13) + [3, 3, 3],
      [UInt8](repeating: 7, count: 13) + [2, 3, 3], [UInt8](repeating: 17, count: 16),
      [9] + [UInt8](repeating: 16, count: 15),
    ])
  func everyPaddingIsJudgedAsOpenSSLJudgesIt(block: [UInt8]) throws {
    let keys = try Fixture.keys()
    let message = try badlyPaddedMessage(keys: keys, block: Data(block))
    // The streaming decryptor keeps OpenSSL's own CBC context and padding check: the reference.
    let expected = Result {
      try stream(message, through: RNCryptor.Decryptor(keys: keys), chunkLengths: [message.count])
    }
    let oneShot = Result { try RNCryptor.decrypt(message, keys: keys) }
    let intoBuffer = Result { () throws -> Data in
      var output = [UInt8](repeating: 0xEE, count: 16)
      let length = try message.withUnsafeBytes { input in
        try output.withUnsafeMutableBytes { try RNCryptor.open(input, keys: keys, into: $0) }
      }
      return Data(output[0..<length])
    }
    for result in [oneShot, intoBuffer] {
      switch (expected, result) {
      case (.success(let plaintext), .success(let got)): #expect(got == plaintext)
      case (.failure, .failure(let error)): #expect(error as? RNCryptor.Error == .badPadding)
      default: Issue.record("expected \(expected), got \(result)")
      }
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

import Foundation
import Testing

@testable import RNCryptorCodec

/// Sealing keeps each key's CBC contexts keyed and makes a message's IV by encrypting fresh
/// random bytes as the context's next block. Prevents two ways that could go wrong: an IV that
/// is the previous message's last ciphertext block (predictable to anyone who saw that message,
/// which opens CBC to chosen-plaintext attacks), and a message whose bytes differ from what
/// OpenSSL's own CBC makes of its IV and plaintext.
@Suite("Sealed messages get fresh, unpredictable IVs and stay standard CBC")
struct ChainedIVTests {
  /// The IV of a message (bytes 2..<18) and its last ciphertext block (before the HMAC).
  private static func ivAndLastBlock(_ message: Data) -> (Data, Data) {
    let bytes = [UInt8](message)
    let end = bytes.count - RNCryptor.Format.hmacLength
    return (Data(bytes[2..<18]), Data(bytes[end - 16..<end]))
  }

  /// Seals `plaintext` through the engine's path, the message's plaintext split at `split`.
  private static func sealInPieces(_ plaintext: Data, split: Int, keys: RNCryptor.Keys) throws -> Data {
    var message = Data(count: RNCryptor.Format.messageLength(plaintextLength: plaintext.count, type: .keys))
    try plaintext.withUnsafeBytes { input in
      try message.withUnsafeMutableBytes { output in
        try RNCryptor.seal(
          prefix: UnsafeRawBufferPointer(rebasing: input[0..<split]),
          body: UnsafeRawBufferPointer(rebasing: input[split...]), keys: keys, into: output)
      }
    }
    return message
  }

  @Test("no IV is the last ciphertext block of the message sealed before it, and none repeats")
  func ivsAreNotTheChain() throws {
    let keys = try Fixture.keys()
    var seen = Set<Data>()
    var previousLast: Data?
    for index in 0..<400 {
      let plaintext = Data(repeating: UInt8(index & 0xFF), count: index % 70)
      let message =
        index % 2 == 0
        ? try RNCryptor.encrypt(plaintext, keys: keys)
        : try Self.sealInPieces(plaintext, split: plaintext.count / 2, keys: keys)
      let (iv, last) = Self.ivAndLastBlock(message)
      if let previousLast { #expect(iv != previousLast, "message \(index)") }
      #expect(seen.insert(iv).inserted, "message \(index) repeats an IV")
      previousLast = last
    }
  }

  @Test("every length and every split of prefix and body opens through OpenSSL's own CBC to the plaintext")
  func everySplitOpensThroughOpenSSL() throws {
    let keys = try Fixture.keys()
    for length in 0...49 {
      let plaintext = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ length) })
      var messages = [try RNCryptor.encrypt(plaintext, keys: keys)]
      for split in 0...length { messages.append(try Self.sealInPieces(plaintext, split: split, keys: keys)) }
      for message in messages {
        #expect(message.count == RNCryptor.Format.messageLength(plaintextLength: length, type: .keys))
        // The streaming decryptor sets the header's IV on a CBC context with padding: the reference.
        let opened = try stream(message, through: RNCryptor.Decryptor(keys: keys), chunkLengths: [message.count])
        #expect(opened == plaintext, "length \(length)")
      }
    }
  }
}

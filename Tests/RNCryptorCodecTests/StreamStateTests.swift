import Foundation
import RNCryptorCodec
import Testing

/// A finished or failed stream refuses further use with `.streamFinished`. Prevents a second
/// `finalize()` that appends another HMAC, or an `update` after a failure that goes on
/// returning unauthenticated plaintext.
@Suite("Streams after finalize or failure")
struct StreamStateTests {
  @Test("Encryptor: update and finalize after finalize give .streamFinished")
  func encryptorAfterFinalize() throws {
    let encryptor = try RNCryptor.Encryptor(keys: Fixture.keys())
    let message = try encryptor.update(Data("abc".utf8)) + encryptor.finalize()
    #expect(throws: RNCryptor.Error.streamFinished) { try encryptor.update(Data("more".utf8)) }
    #expect(throws: RNCryptor.Error.streamFinished) { try encryptor.update(Data()) }
    #expect(throws: RNCryptor.Error.streamFinished) { try encryptor.finalize() }
    // The message written before is whole and unaffected.
    #expect(try RNCryptor.decrypt(message, keys: Fixture.keys()) == Data("abc".utf8))
  }

  @Test("Decryptor: update and finalize after a successful finalize give .streamFinished")
  func decryptorAfterFinalize() throws {
    let keys = try Fixture.keys()
    let message = try RNCryptor.encrypt(Data("abc".utf8), keys: keys)
    let decryptor = RNCryptor.Decryptor(keys: keys)
    #expect(try decryptor.update(message) + decryptor.finalize() == Data("abc".utf8))
    #expect(throws: RNCryptor.Error.streamFinished) { try decryptor.update(message) }
    #expect(throws: RNCryptor.Error.streamFinished) { try decryptor.update(Data()) }
    #expect(throws: RNCryptor.Error.streamFinished) { try decryptor.finalize() }
  }

  @Test("Decryptor: after failed authentication, finalize and update give .streamFinished")
  func decryptorAfterAuthenticationFailure() throws {
    var message = try RNCryptor.encrypt(Data("abc".utf8), keys: Fixture.keys())
    message[message.count - 1] ^= 0x80
    let decryptor = try RNCryptor.Decryptor(keys: Fixture.keys())
    _ = try decryptor.update(message)
    #expect(throws: RNCryptor.Error.authenticationFailed) { try decryptor.finalize() }
    #expect(throws: RNCryptor.Error.streamFinished) { try decryptor.finalize() }
    #expect(throws: RNCryptor.Error.streamFinished) { try decryptor.update(Data([0])) }
  }

  @Test("Decryptor: after a header error, update and finalize give .streamFinished")
  func decryptorAfterHeaderError() throws {
    let decryptor = try RNCryptor.Decryptor(keys: Fixture.keys())
    #expect(throws: RNCryptor.Error.unknownVersion(4)) { try decryptor.update(Data([4, 0])) }
    #expect(throws: RNCryptor.Error.streamFinished) { try decryptor.update(Data(repeating: 0, count: 64)) }
    #expect(throws: RNCryptor.Error.streamFinished) { try decryptor.finalize() }
  }

  @Test("Decryptor: after finalize on a truncated message, the stream stays finished")
  func decryptorAfterTruncation() throws {
    let decryptor = try RNCryptor.Decryptor(keys: Fixture.keys())
    _ = try decryptor.update(Data([3, 0, 1, 2]))
    #expect(throws: RNCryptor.Error.messageTooShort(length: 4, minimum: RNCryptor.Format.minimumLength(.keys))) {
      try decryptor.finalize()
    }
    #expect(throws: RNCryptor.Error.streamFinished) { try decryptor.finalize() }
  }
}

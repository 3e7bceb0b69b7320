import Foundation
import RNCryptorCodec

/// Seals and opens the messages of one store with its data key: record keys, record values
/// and hint files are RNCryptor v3 key messages (options 0) under the same 64-byte key.
struct RecordCipher: Sendable {
  let keys: RNCryptor.Keys

  /// The message for a key's UTF-8 bytes.
  func sealKey(_ key: String) throws -> Data {
    try seal(Data(key.utf8))
  }

  /// The message for arbitrary bytes.
  func seal(_ plaintext: Data) throws -> Data {
    do {
      return try RNCryptor.encrypt(plaintext, keys: keys)
    } catch {
      throw CaskError.crypto(String(describing: error))
    }
  }

  /// Opens a message read from `file` at `offset`.
  ///
  /// - Throws: `CaskError.corrupt` when it does not authenticate or is malformed.
  func open(_ message: Data, file: String, offset: UInt64) throws -> Data {
    do {
      return try RNCryptor.decrypt(message, keys: keys)
    } catch let error as RNCryptor.Error {
      switch error {
      case .randomGeneratorFailed, .libcrypto: throw CaskError.crypto(error.description)
      default: throw CaskError.corrupt(file: file, offset: offset, reason: error.description)
      }
    }
  }

  /// Opens a key message and checks that it holds valid UTF-8.
  func openKey(_ message: Data, file: String, offset: UInt64) throws -> String {
    let bytes = try open(message, file: file, offset: offset)
    guard let key = String(validating: bytes, as: UTF8.self) else {
      throw CaskError.corrupt(file: file, offset: offset, reason: "key is not valid UTF-8")
    }
    return key
  }
}

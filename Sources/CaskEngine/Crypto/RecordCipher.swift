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

  /// The message for a value, bound to its key: the plaintext is the key's length (2 bytes,
  /// little-endian), the key's UTF-8 bytes, then the value. A value moved to another record
  /// (or read through a wrong index entry) fails `openValue` instead of being returned for
  /// the wrong key; the length keeps "user:1" from matching a value of "user:10".
  func sealValue(_ value: Data, forKey key: String) throws -> Data {
    let keyLength = key.utf8.count
    var plaintext = Data(capacity: CaskFormat.valueKeyLengthPrefix + keyLength + value.count)
    withUnsafeBytes(of: UInt16(keyLength).littleEndian) { plaintext.append(contentsOf: $0) }
    plaintext.append(contentsOf: key.utf8)
    plaintext.append(value)
    return try seal(plaintext)
  }

  /// Opens a value message and checks that it belongs to `key`.
  ///
  /// - Throws: `CaskError.corrupt` when it does not authenticate or names another key.
  func openValue(_ message: Data, forKey key: String, file: String, offset: UInt64) throws -> Data {
    let plaintext = try open(message, file: file, offset: offset)
    let keyBytes = key.utf8
    let prefix = CaskFormat.valueKeyLengthPrefix
    let start = plaintext.startIndex
    guard plaintext.count >= prefix + keyBytes.count,
      Int(plaintext[start]) | Int(plaintext[start + 1]) << 8 == keyBytes.count,
      plaintext[(start + prefix)..<(start + prefix + keyBytes.count)].elementsEqual(keyBytes)
    else {
      throw CaskError.corrupt(file: file, offset: offset, reason: "value belongs to another key")
    }
    // A copy, so that callers get a Data indexed from zero.
    return Data(plaintext.dropFirst(prefix + keyBytes.count))
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

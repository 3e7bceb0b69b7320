import Foundation
import RNCryptorCodec

#if canImport(Glibc)
  import Glibc
#endif

/// Seals and opens the messages of one store with its data key: record keys, record values
/// and hint files are RNCryptor v3 key messages (options 0) under the same 64-byte key.
struct RecordCipher: Sendable {
  let keys: RNCryptor.Keys

  /// The message for arbitrary bytes.
  func seal(_ plaintext: Data) throws -> Data {
    do {
      return try RNCryptor.encrypt(plaintext, keys: keys)
    } catch {
      throw CaskError.crypto(String(describing: error))
    }
  }

  /// The length of a key message for `count` bytes of plaintext.
  static func messageLength(plaintextLength count: Int) -> Int {
    RNCryptor.Format.messageLength(plaintextLength: count, type: .keys)
  }

  /// The length of the value message `sealValue(_:forKey:into:)` writes.
  static func valueMessageLength(valueLength: Int, keyLength: Int) -> Int {
    messageLength(plaintextLength: CaskFormat.valueKeyLengthPrefix + keyLength + valueLength)
  }

  /// Seals a key's UTF-8 bytes into `output`, exactly `messageLength(plaintextLength:)` bytes.
  func sealKey(_ keyBytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws {
    try seal(prefix: UnsafeRawBufferPointer(start: nil, count: 0), body: keyBytes, into: output)
  }

  /// Seals a value bound to its key (see `sealValue(_:forKey:)`) into `output`, exactly
  /// `valueMessageLength(valueLength:keyLength:)` bytes, without assembling the plaintext.
  func sealValue(
    _ value: UnsafeRawBufferPointer, forKey keyBytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) throws {
    let prefixLength = CaskFormat.valueKeyLengthPrefix
    try withUnsafeTemporaryAllocation(byteCount: prefixLength + keyBytes.count, alignment: 1) { prefix in
      prefix.storeBytes(of: UInt16(keyBytes.count).littleEndian, as: UInt16.self)
      if keyBytes.count > 0 {
        UnsafeMutableRawBufferPointer(rebasing: prefix[prefixLength...]).copyMemory(from: keyBytes)
      }
      try seal(prefix: UnsafeRawBufferPointer(prefix), body: value, into: output)
    }
  }

  private func seal(
    prefix: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) throws {
    do {
      try RNCryptor.seal(prefix: prefix, body: body, keys: keys, into: output)
    } catch {
      throw CaskError.crypto(String(describing: error))
    }
  }

  /// Opens a value message and checks that it belongs to `key`.
  ///
  /// - Throws: `CaskError.corrupt` when it does not authenticate or names another key.
  func openValue(_ message: Data, forKey key: String, file: String, offset: UInt64) throws -> Data {
    try message.withUnsafeBytes { try openValue($0, forKey: key, file: file, offset: offset) }
  }

  /// Opens a value message and checks that it belongs to `key`, returning a fresh `Data`
  /// with the value alone. The key is compared inside the plaintext with `memcmp`; the
  /// plaintext is decrypted into a temporary buffer (on the stack when small).
  ///
  /// - Throws: `CaskError.corrupt` when it does not authenticate or names another key.
  func openValue(_ message: UnsafeRawBufferPointer, forKey key: String, file: String, offset: UInt64) throws
    -> Data
  {
    let capacity = Swift.max(0, message.count - RNCryptor.Format.keyHeaderLength - RNCryptor.Format.hmacLength)
    return try withUnsafeTemporaryAllocation(byteCount: Swift.max(capacity, 1), alignment: 16) { plaintext in
      let length = try open(message, into: plaintext, file: file, offset: offset)
      let prefix = CaskFormat.valueKeyLengthPrefix
      let matches = IndexKey.withUTF8(of: key) { keyBytes -> Bool in
        guard length >= prefix + keyBytes.count,
          Int(plaintext[0]) | Int(plaintext[1]) << 8 == keyBytes.count
        else { return false }
        return keyBytes.count == 0
          || memcmp(plaintext.baseAddress! + prefix, keyBytes.baseAddress!, keyBytes.count) == 0
      }
      guard matches else {
        throw CaskError.corrupt(file: file, offset: offset, reason: "value belongs to another key")
      }
      let start = prefix + key.utf8.count
      return Data(UnsafeRawBufferPointer(rebasing: plaintext[start..<length]))
    }
  }

  /// Opens a message into `output` (at least its ciphertext length).
  ///
  /// - Returns: the plaintext's length.
  /// - Throws: `CaskError.corrupt` when it does not authenticate or is malformed.
  func open(_ message: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, file: String, offset: UInt64)
    throws -> Int
  {
    do {
      return try RNCryptor.open(message, keys: keys, into: output)
    } catch let error as RNCryptor.Error {
      switch error {
      case .randomGeneratorFailed, .libcrypto: throw CaskError.crypto(error.description)
      default: throw CaskError.corrupt(file: file, offset: offset, reason: error.description)
      }
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

  /// Opens a key message and checks that it holds a key `put` could have written: valid
  /// UTF-8, 1 to 65,535 bytes. (A message that authenticates is not proof of that: another
  /// implementation, or a bug, may have sealed an empty key, which trapped the index, or a
  /// longer one, which trapped the hint writer.)
  func openKey(_ message: Data, file: String, offset: UInt64) throws -> String {
    try Self.validKey(open(message, file: file, offset: offset), file: file, offset: offset)
  }

  /// The key an opened key message holds; `openKey`'s checks.
  static func validKey(_ bytes: Data, file: String, offset: UInt64) throws -> String {
    guard !bytes.isEmpty else { throw CaskError.corrupt(file: file, offset: offset, reason: "key is empty") }
    guard bytes.count <= CaskFormat.maximumKeyLength else {
      throw CaskError.corrupt(
        file: file, offset: offset,
        reason: "key of \(bytes.count) bytes is longer than \(CaskFormat.maximumKeyLength)")
    }
    guard let key = String(validating: bytes, as: UTF8.self) else {
      throw CaskError.corrupt(file: file, offset: offset, reason: "key is not valid UTF-8")
    }
    return key
  }
}

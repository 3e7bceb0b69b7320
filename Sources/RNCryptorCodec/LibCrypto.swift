internal import CLibCrypto
import Foundation

/// Thin, internal wrappers over the libcrypto calls the codec makes. Nothing here is public:
/// no OpenSSL type or pointer leaves this module.
enum LibCrypto {
  /// Algorithms fetched once per process (OpenSSL 3 fetches are costly).
  final class Algorithms: @unchecked Sendable {
    let aes256CBC: OpaquePointer
    let hmac: OpaquePointer
    let sha1: OpaquePointer

    init?() {
      guard let aes = EVP_CIPHER_fetch(nil, "AES-256-CBC", nil) else { return nil }
      guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else {
        EVP_CIPHER_free(aes)
        return nil
      }
      guard let sha1 = EVP_MD_fetch(nil, "SHA1", nil) else {
        EVP_CIPHER_free(aes)
        EVP_MAC_free(mac)
        return nil
      }
      self.aes256CBC = aes
      self.hmac = mac
      self.sha1 = sha1
    }
  }

  static let shared = Algorithms()

  static func algorithms() throws -> Algorithms {
    guard let shared else { throw failure("EVP_*_fetch") }
    return shared
  }

  /// The error for a failed call, with OpenSSL's code; clears OpenSSL's error queue of this thread.
  static func failure(_ function: String) -> RNCryptor.Error {
    let code = ERR_get_error()
    ERR_clear_error()
    return .libcrypto(function: function, code: UInt(code))
  }

  /// Fills `buffer` from OpenSSL's CSPRNG.
  static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) throws {
    guard buffer.count > 0 else { return }
    guard let base = buffer.baseAddress,
      RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1
    else {
      ERR_clear_error()
      throw RNCryptor.Error.randomGeneratorFailed
    }
  }

  /// `count` fresh random bytes.
  static func randomData(count: Int) throws -> Data {
    var data = Data(count: count)
    try data.withUnsafeMutableBytes { (buffer) throws in try randomBytes(buffer) }
    return data
  }

  /// PBKDF2-HMAC-SHA1 with RNCryptor v3's parameters into a wiping buffer.
  static func deriveKey(password: SecureBytes, salt: UnsafeRawBufferPointer) throws
    -> SecureBytes
  {
    let sha1 = try algorithms().sha1
    return try SecureBytes(count: RNCryptor.Format.keyLength) { (output) throws in
      let status = password.withUnsafeBytes { passwordBytes in
        PKCS5_PBKDF2_HMAC(
          passwordBytes.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(passwordBytes.count),
          salt.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(salt.count),
          Int32(RNCryptor.Format.pbkdf2Iterations), sha1,
          Int32(output.count), output.baseAddress?.assumingMemoryBound(to: UInt8.self))
      }
      guard status == 1 else { throw failure("PKCS5_PBKDF2_HMAC") }
    }
  }

  /// Wipes `count` bytes at `pointer` in a way the optimiser keeps.
  static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress else { return }
    OPENSSL_cleanse(base, buffer.count)
  }
}

/// An AES-256-CBC context with PKCS#7 padding, encrypting or decrypting one message.
final class CipherContext {
  private let context: OpaquePointer

  /// - Parameters:
  ///   - key: the 32-byte encryption key.
  ///   - iv: the 16-byte IV.
  ///   - encrypt: `true` to encrypt, `false` to decrypt.
  init(key: SecureBytes, iv: UnsafeRawBufferPointer, encrypt: Bool) throws {
    let algorithm = try LibCrypto.algorithms().aes256CBC
    guard let context = EVP_CIPHER_CTX_new() else { throw LibCrypto.failure("EVP_CIPHER_CTX_new") }
    self.context = context
    let status = key.withUnsafeBytes { keyBytes in
      EVP_CipherInit_ex2(
        context, algorithm, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
        iv.baseAddress?.assumingMemoryBound(to: UInt8.self), encrypt ? 1 : 0, nil)
    }
    guard status == 1 else { throw LibCrypto.failure("EVP_CipherInit_ex2") }
  }

  deinit {
    EVP_CIPHER_CTX_free(context)
  }

  /// Processes `input` into `output`, which must have room for `input.count + 16` bytes.
  /// - Returns: the number of bytes written.
  func update(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws
    -> Int
  {
    guard input.count > 0 else { return 0 }
    var written: Int32 = 0
    // OpenSSL takes an int length: feed large inputs in pieces.
    var offset = 0
    var total = 0
    while offset < input.count {
      let length = Swift.min(input.count - offset, 1 << 30)
      let status = EVP_CipherUpdate(
        context, output.advanced(by: total).assumingMemoryBound(to: UInt8.self), &written,
        input.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(length))
      guard status == 1 else { throw LibCrypto.failure("EVP_CipherUpdate") }
      offset += length
      total += Int(written)
    }
    return total
  }

  /// Writes the last block (encryption: padding; decryption: checks and strips it).
  /// - Returns: the number of bytes written, or `nil` when decryption found bad padding.
  func finish(into output: UnsafeMutableRawPointer) -> Int? {
    var written: Int32 = 0
    let status = EVP_CipherFinal_ex(context, output.assumingMemoryBound(to: UInt8.self), &written)
    guard status == 1 else {
      ERR_clear_error()
      return nil
    }
    return Int(written)
  }
}

/// A keyed HMAC-SHA256 template, built once per key, duplicated for each message.
final class HMACKey: @unchecked Sendable {
  // Never updated after init; only duplicated, which reads it.
  private let template: OpaquePointer

  init(key: SecureBytes) throws {
    let mac = try LibCrypto.algorithms().hmac
    let template = key.withUnsafeBytes { keyBytes in
      cask_hmac_sha256_new(mac, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), keyBytes.count)
    }
    guard let template else { throw LibCrypto.failure("EVP_MAC_init") }
    self.template = template
  }

  deinit {
    EVP_MAC_CTX_free(template)
  }

  /// A fresh running HMAC for one message.
  func start() throws -> HMACContext {
    guard let context = EVP_MAC_CTX_dup(template) else { throw LibCrypto.failure("EVP_MAC_CTX_dup") }
    return HMACContext(context: context)
  }
}

/// A running HMAC-SHA256 over one message.
final class HMACContext {
  private let context: OpaquePointer

  fileprivate init(context: OpaquePointer) {
    self.context = context
  }

  deinit {
    EVP_MAC_CTX_free(context)
  }

  func update(_ bytes: UnsafeRawBufferPointer) throws {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    guard EVP_MAC_update(context, base.assumingMemoryBound(to: UInt8.self), bytes.count) == 1 else {
      throw LibCrypto.failure("EVP_MAC_update")
    }
  }

  /// Writes the 32-byte MAC to `output`.
  func finish(into output: UnsafeMutableRawPointer) throws {
    var written = 0
    guard
      EVP_MAC_final(
        context, output.assumingMemoryBound(to: UInt8.self), &written, RNCryptor.Format.hmacLength) == 1,
      written == RNCryptor.Format.hmacLength
    else { throw LibCrypto.failure("EVP_MAC_final") }
  }
}

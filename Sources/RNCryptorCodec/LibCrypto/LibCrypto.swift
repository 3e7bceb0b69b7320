internal import CLibCrypto
import Foundation

/// Thin, internal wrappers over the libcrypto calls the codec makes. Nothing here is public:
/// no OpenSSL type or pointer leaves this module.
enum LibCrypto {
  /// Algorithms fetched once per process (OpenSSL 3 fetches are costly).
  final class Algorithms: @unchecked Sendable {
    let aes256CBC: OpaquePointer
    /// For decryption: CBC's blocks decrypt independently (see `CipherKey.decryptCBC`).
    let aes256ECB: OpaquePointer

    init?() {
      guard let cbc = EVP_CIPHER_fetch(nil, "AES-256-CBC", nil), let ecb = EVP_CIPHER_fetch(nil, "AES-256-ECB", nil)
      else { return nil }
      self.aes256CBC = cbc
      self.aes256ECB = ecb
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

  /// Wipes `count` bytes at `pointer` in a way the optimiser keeps.
  static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress else { return }
    OPENSSL_cleanse(base, buffer.count)
  }
}

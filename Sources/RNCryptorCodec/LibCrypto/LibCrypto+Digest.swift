internal import CLibCrypto
import Foundation

extension RNCryptor {
  /// The SHA-256 digest of `data` (32 bytes), through libcrypto: what a listing keeps of each
  /// file it names, so that a file swapped for another is told apart (the `cask` tool's
  /// exports). Not a MAC: it binds only inside a document that is itself authenticated.
  package static func sha256(_ data: Data) -> Data {
    var digest = Data(count: Int(SHA256_DIGEST_LENGTH))
    data.withUnsafeBytes { input in
      digest.withUnsafeMutableBytes { output in
        _ = SHA256(
          input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count,
          output.baseAddress?.assumingMemoryBound(to: UInt8.self))
      }
    }
    return digest
  }
}

import Foundation

extension RNCryptor {
  /// HMAC-SHA256 of `message` under `key` (at most 64 bytes): a keyed hash for a layer that
  /// must name things without revealing them (sync's end-to-end record ids).
  ///
  /// - Returns: the 32-byte MAC.
  /// - Throws: `.libcrypto` when libcrypto fails.
  package static func authenticationCode(of message: Data, key: SecureBytes) throws -> Data {
    let hmac = try HMACKey(key: key)
    var output = Data(count: 32)
    try output.withUnsafeMutableBytes { out in
      try message.withUnsafeBytes { bytes in
        guard let base = out.baseAddress else { return }
        try hmac.authenticate(bytes, into: base)
      }
    }
    return output
  }
}

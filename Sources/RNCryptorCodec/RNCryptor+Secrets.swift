import Foundation

extension RNCryptor {
  /// Encrypts a secret held in a wiping buffer into a key message, without copying it into
  /// memory that is not wiped.
  ///
  /// - Throws: as `encrypt(_:keys:)`.
  public static func encrypt(secret: SecureBytes, keys: Keys) throws -> Data {
    try secret.withUnsafeBytes { bytes in
      try seal(borrowing(bytes), keys: keys, salts: nil, secret: true)
    }
  }

  /// Encrypts a secret held in a wiping buffer into a password message.
  public static func encrypt(secret: SecureBytes, passwordKeys: PasswordKeys) throws -> Data {
    try secret.withUnsafeBytes { bytes in
      try seal(
        borrowing(bytes), keys: passwordKeys.keys, salts: (passwordKeys.encryptionSalt, passwordKeys.hmacSalt),
        secret: true)
    }
  }

  /// Decrypts a key message whose plaintext is a secret, into a wiping buffer; the
  /// intermediate plaintext is wiped.
  public static func decryptSecret(_ message: Data, keys: Keys) throws -> SecureBytes {
    guard try Format.credentialType(of: message) == .keys else {
      throw Error.wrongCredentialType(message: .password)
    }
    var plaintext = try open(message, keys: keys, type: .keys)
    return wipingCopy(&plaintext)
  }

  /// Decrypts a password message whose plaintext is a secret, into a wiping buffer.
  public static func decryptSecret(_ message: Data, passwordKeys: PasswordKeys) throws -> SecureBytes {
    _ = try passwordSalts(of: message)
    var plaintext = try open(message, keys: passwordKeys.keys, type: .password)
    return wipingCopy(&plaintext)
  }

  /// Copies `plaintext` (uniquely referenced) into a wiping buffer and wipes it in place.
  private static func wipingCopy(_ plaintext: inout Data) -> SecureBytes {
    let secret = SecureBytes(plaintext)
    plaintext.withUnsafeMutableBytes { LibCrypto.cleanse($0) }
    return secret
  }

  /// A `Data` that views `bytes` without copying; valid only while `bytes` is.
  private static func borrowing(_ bytes: UnsafeRawBufferPointer) -> Data {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return Data() }
    return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: base), count: bytes.count, deallocator: .none)
  }
}

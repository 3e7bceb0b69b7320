/// Errors of the RNCryptor v3 codec.
///
/// No case carries a password, a key or plaintext, and no description prints one.
extension RNCryptor {
  public enum Error: Swift.Error, Equatable, Sendable {
    // MARK: Reading a message

    /// Thrown when the first byte of a message is not 3, the only version this codec reads.
    case unknownVersion(UInt8)
    /// Thrown when the options byte is neither 0 (key message) nor 1 (password message).
    case unknownOptions(UInt8)
    /// Thrown when a password message is given to key-based decryption, or a key message
    /// to password-based decryption.
    case wrongCredentialType(message: CredentialType)
    /// Thrown when a message is shorter than the smallest valid message of its kind, or its
    /// ciphertext is not a whole number of AES blocks.
    case messageTooShort(length: Int, minimum: Int)
    /// Thrown when the HMAC does not match. RNCryptor v3 cannot tell a wrong password or key
    /// from a modified message: both end here.
    case authenticationFailed
    /// Thrown when the message authenticated but its PKCS#7 padding is invalid, which means
    /// it was produced by a faulty encryptor with the right keys.
    case badPadding

    // MARK: Credentials

    /// Thrown when an encryption or HMAC key is not 32 bytes long.
    case invalidKeyLength(Int)
    /// Thrown when a salt is not 8 bytes long.
    case invalidSaltLength(Int)
    /// Thrown when the password is empty.
    case emptyPassword
    /// Thrown when scrypt parameters are outside `ScryptParameters`' bounds (cost not a power
    /// of two, too much memory or work), before anything is allocated; `reason` says which.
    case invalidScryptParameters(reason: String)

    // MARK: Streaming

    /// Thrown when `update` or `finalize` is called on an encryptor or decryptor that has
    /// already finished or failed.
    case streamFinished

    // MARK: The platform

    /// Thrown when the random number generator could not produce bytes. No salt or IV is
    /// ever replaced by zeros.
    case randomGeneratorFailed
    /// Thrown when a libcrypto call fails; `function` names it, `code` is OpenSSL's error code.
    case libcrypto(function: String, code: UInt)
    /// Thrown when a file could not be read, written or renamed by the file helpers. A failure
    /// on the hidden temporary file beside the destination names the destination (operation
    /// `write` when the temporary file cannot be created).
    case file(operation: String, path: String, errno: Int32)
  }

  /// The kind of credential a message was made with.
  public enum CredentialType: Sendable, Equatable {
    /// Options byte 1: salts in the header, keys derived from a password.
    case password
    /// Options byte 0: no salts, raw encryption and HMAC keys.
    case keys
  }
}

extension RNCryptor.Error: CustomStringConvertible {
  public var description: String {
    switch self {
    case .unknownVersion(let version):
      return "RNCryptor: unsupported format version \(version) (expected 3)"
    case .unknownOptions(let options):
      return "RNCryptor: unknown options byte \(options)"
    case .wrongCredentialType(let type):
      switch type {
      case .password: return "RNCryptor: this is a password message; decrypt it with a password"
      case .keys: return "RNCryptor: this is a key message; decrypt it with keys"
      }
    case .messageTooShort(let length, let minimum):
      return "RNCryptor: message of \(length) bytes is truncated or malformed (minimum \(minimum))"
    case .authenticationFailed:
      return "RNCryptor: authentication failed (wrong password or key, or the message was modified)"
    case .badPadding:
      return "RNCryptor: invalid padding in an authenticated message"
    case .invalidKeyLength(let length):
      return "RNCryptor: key of \(length) bytes (expected 32)"
    case .invalidSaltLength(let length):
      return "RNCryptor: salt of \(length) bytes (expected 8)"
    case .emptyPassword:
      return "RNCryptor: the password is empty"
    case .invalidScryptParameters(let reason):
      return "RNCryptor: unusable scrypt parameters: \(reason)"
    case .streamFinished:
      return "RNCryptor: the stream has already finished"
    case .randomGeneratorFailed:
      return "RNCryptor: the random number generator failed"
    case .libcrypto(let function, let code):
      return "RNCryptor: libcrypto \(function) failed (error \(code))"
    case .file(let operation, let path, let errno):
      return "RNCryptor: \(operation) \(path) failed (errno \(errno))"
    }
  }
}

/// Byte layout of RNCryptor data format v3. See Docs/CODEC.md.
///
/// ```
/// password message: 03 01 | encSalt(8) | hmacSalt(8) | IV(16) | ciphertext | HMAC(32)
/// key message:      03 00 | IV(16) | ciphertext | HMAC(32)
/// ```
/// The HMAC-SHA256 covers every byte before it (header and ciphertext).
extension RNCryptor {
  /// Constants of the v3 format.
  public enum Format {
    /// The version byte.
    public static let version: UInt8 = 3
    /// Options byte of a message encrypted with raw keys.
    public static let keyOptions: UInt8 = 0
    /// Options byte of a message encrypted with a password.
    public static let passwordOptions: UInt8 = 1
    /// Length of each PBKDF2 salt.
    public static let saltLength = 8
    /// Length of the AES-CBC initialisation vector.
    public static let ivLength = 16
    /// AES block length; the ciphertext is a whole number of blocks.
    public static let blockLength = 16
    /// Length of each key (AES-256 and the HMAC key).
    public static let keyLength = 32
    /// Length of the HMAC-SHA256 trailer.
    public static let hmacLength = 32
    /// PBKDF2-HMAC-SHA1 iterations.
    public static let pbkdf2Iterations = 10_000
    /// Header length of a key message: version, options, IV.
    public static let keyHeaderLength = 2 + ivLength
    /// Header length of a password message: version, options, two salts, IV.
    public static let passwordHeaderLength = 2 + 2 * saltLength + ivLength

    /// The header length for a credential type.
    public static func headerLength(_ type: CredentialType) -> Int {
      type == .password ? passwordHeaderLength : keyHeaderLength
    }

    /// The smallest valid message of a kind: header, one block, HMAC.
    public static func minimumLength(_ type: CredentialType) -> Int {
      headerLength(type) + blockLength + hmacLength
    }

    /// The length of the message that encrypts `plaintextLength` bytes.
    public static func messageLength(plaintextLength: Int, type: CredentialType) -> Int {
      headerLength(type) + ciphertextLength(plaintextLength: plaintextLength) + hmacLength
    }

    /// PKCS#7 always adds 1 to 16 bytes.
    public static func ciphertextLength(plaintextLength: Int) -> Int {
      (plaintextLength / blockLength + 1) * blockLength
    }

    /// Reads the credential type from the first two bytes of a message.
    ///
    /// - Throws: `messageTooShort` below two bytes, `unknownVersion`, `unknownOptions`.
    public static func credentialType<Bytes: Collection<UInt8>>(of message: Bytes) throws
      -> CredentialType
    {
      var iterator = message.makeIterator()
      guard let version = iterator.next(), let options = iterator.next() else {
        throw RNCryptor.Error.messageTooShort(length: message.count, minimum: minimumLength(.keys))
      }
      guard version == Format.version else { throw RNCryptor.Error.unknownVersion(version) }
      switch options {
      case passwordOptions: return .password
      case keyOptions: return .keys
      default: throw RNCryptor.Error.unknownOptions(options)
      }
    }
  }
}

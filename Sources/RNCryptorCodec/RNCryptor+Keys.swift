import Foundation

extension RNCryptor {
  /// An encryption key and an HMAC key, 32 bytes each, held in wiping buffers.
  ///
  /// Building `Keys` from a password runs PBKDF2 (twice, once per salt) here and nowhere else,
  /// so a caller that keeps the value pays for the derivation once.
  public struct Keys: Sendable {
    /// The keys and their prepared forms in one object. Prevents: four reference counts
    /// changed at every copy of the keys (an engine record cipher is copied several times per
    /// record) where one does.
    private final class Storage: Sendable {
      let encryptionKey: SecureBytes
      let hmacKey: SecureBytes
      let hmac: HMACKey
      let cipher: CipherKey

      init(encryptionKey: SecureBytes, hmacKey: SecureBytes) throws {
        self.encryptionKey = encryptionKey
        self.hmacKey = hmacKey
        self.hmac = try HMACKey(key: hmacKey)
        self.cipher = CipherKey(key: encryptionKey)
      }
    }

    private let storage: Storage

    /// The AES-256 key.
    public var encryptionKey: SecureBytes { storage.encryptionKey }
    /// The HMAC-SHA256 key.
    public var hmacKey: SecureBytes { storage.hmacKey }
    var hmac: HMACKey { storage.hmac }
    var cipher: CipherKey { storage.cipher }

    /// Keys from raw bytes.
    ///
    /// - Throws: `RNCryptor.Error.invalidKeyLength` unless both are 32 bytes.
    public init(encryptionKey: Data, hmacKey: Data) throws {
      try self.init(encryptionKey: SecureBytes(encryptionKey), hmacKey: SecureBytes(hmacKey))
    }

    /// Keys from wiping buffers, which are kept, not copied.
    ///
    /// - Throws: `RNCryptor.Error.invalidKeyLength` unless both are 32 bytes.
    public init(encryptionKey: SecureBytes, hmacKey: SecureBytes) throws {
      for key in [encryptionKey, hmacKey] where key.count != Format.keyLength {
        throw Error.invalidKeyLength(key.count)
      }
      self.storage = try Storage(encryptionKey: encryptionKey, hmacKey: hmacKey)
    }

    /// Derives both keys from a password with PBKDF2-HMAC-SHA1 (10,000 iterations).
    ///
    /// - Throws: `emptyPassword`, `invalidSaltLength` unless both salts are 8 bytes.
    /// - Complexity: two PBKDF2 runs, a few milliseconds.
    public init(password: String, encryptionSalt: Data, hmacSalt: Data) throws {
      try self.init(password: SecureBytes(utf8: password), encryptionSalt: encryptionSalt, hmacSalt: hmacSalt)
    }

    /// Derives both keys from a password held in a wiping buffer.
    public init(password: SecureBytes, encryptionSalt: Data, hmacSalt: Data) throws {
      guard password.count > 0 else { throw Error.emptyPassword }
      for salt in [encryptionSalt, hmacSalt] where salt.count != Format.saltLength {
        throw Error.invalidSaltLength(salt.count)
      }
      let encryptionKey = try encryptionSalt.withUnsafeBytes { (salt) throws in
        try LibCrypto.deriveKey(password: password, salt: salt)
      }
      let hmacKey = try hmacSalt.withUnsafeBytes { (salt) throws in
        try LibCrypto.deriveKey(password: password, salt: salt)
      }
      try self.init(encryptionKey: encryptionKey, hmacKey: hmacKey)
    }

    /// Two fresh random keys, for a data key that is stored wrapped under another key.
    ///
    /// - Throws: `randomGeneratorFailed`.
    public static func random() throws -> Keys {
      let encryptionKey = try SecureBytes(count: Format.keyLength) { (buffer) throws in
        try LibCrypto.randomBytes(buffer)
      }
      let hmacKey = try SecureBytes(count: Format.keyLength) { (buffer) throws in
        try LibCrypto.randomBytes(buffer)
      }
      return try Keys(encryptionKey: encryptionKey, hmacKey: hmacKey)
    }
  }

  /// Keys derived from a password for one salt pair, with the salts, so that
  /// `RNCryptor.encrypt(_:passwordKeys:)` can write **password-format** messages without
  /// running PBKDF2 for each one.
  ///
  /// Every message still carries the salts in its header, so any RNCryptor v3 implementation
  /// decrypts it from the password alone. Reusing a salt pair is safe because each message
  /// gets a fresh random 16-byte IV: CBC with a random IV under one key is the standard
  /// multi-message use of AES, and the HMAC key authenticates each message separately. What
  /// reuse gives away is only that the messages share a salt pair (hence a password), which
  /// the store reveals anyway by keeping them together. See Docs/CODEC.md.
  public struct PasswordKeys: Sendable {
    /// The derived keys.
    public let keys: Keys
    /// The 8-byte salt of the encryption key.
    public let encryptionSalt: Data
    /// The 8-byte salt of the HMAC key.
    public let hmacSalt: Data

    /// Picks two random salts and derives the keys (two PBKDF2 runs).
    public init(password: String) throws {
      try self.init(password: SecureBytes(utf8: password))
    }

    /// Picks two random salts and derives the keys from a password in a wiping buffer.
    public init(password: SecureBytes) throws {
      try self.init(
        password: password,
        encryptionSalt: LibCrypto.randomData(count: Format.saltLength),
        hmacSalt: LibCrypto.randomData(count: Format.saltLength))
    }

    /// Derives the keys for a given salt pair (two PBKDF2 runs).
    public init(password: String, encryptionSalt: Data, hmacSalt: Data) throws {
      try self.init(password: SecureBytes(utf8: password), encryptionSalt: encryptionSalt, hmacSalt: hmacSalt)
    }

    /// Derives the keys for a given salt pair from a password in a wiping buffer.
    public init(password: SecureBytes, encryptionSalt: Data, hmacSalt: Data) throws {
      self.keys = try Keys(password: password, encryptionSalt: encryptionSalt, hmacSalt: hmacSalt)
      self.encryptionSalt = Data(encryptionSalt)
      self.hmacSalt = Data(hmacSalt)
    }
  }
}

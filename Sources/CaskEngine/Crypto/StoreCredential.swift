import Foundation
import RNCryptorCodec

/// What opens a store: a password (a key derivation runs at open) or the caller's own keys.
enum StoreCredential: Sendable {
  case password(SecureBytes)
  case keys(RNCryptor.Keys)
  /// The data key itself, unwrapped from this very header by the caller: an upgrade opens its
  /// copy, whose header is the old one's, without a second key derivation.
  case unwrapped(RNCryptor.Keys)

  /// The 64-byte data key (encryption key, then HMAC key) in one wiping buffer.
  static func concatenate(_ keys: RNCryptor.Keys) -> SecureBytes {
    SecureBytes(count: CaskFormat.dataKeyLength) { buffer in
      keys.encryptionKey.withUnsafeBytes {
        UnsafeMutableRawBufferPointer(rebasing: buffer[0..<CaskFormat.dataKeyPartLength]).copyMemory(from: $0)
      }
      keys.hmacKey.withUnsafeBytes {
        UnsafeMutableRawBufferPointer(rebasing: buffer[CaskFormat.dataKeyPartLength...]).copyMemory(from: $0)
      }
    }
  }

  /// Wraps `dataKey` for a new header. From version 5 on the wrapped plaintext is the data
  /// key followed by `version` (2 bytes, little-endian), so that the version is bound to
  /// what only the password opens.
  ///
  /// - Parameters:
  ///   - version: the store's format version, written into the header.
  ///   - keyDerivation: how a password's keys are derived (ignored for keys).
  /// - Throws: `invalidKey` for an empty password or scrypt parameters out of bounds, `crypto`.
  /// - Complexity: two PBKDF2 runs or one scrypt run for a password.
  func wrap(
    _ dataKey: SecureBytes, version: UInt16 = CaskFormat.formatVersion,
    keyDerivation: CaskStore.KeyDerivation = .standard
  ) throws -> StoreHeader {
    let dataKey = Self.bindingVersion(version, to: dataKey)
    do {
      switch (self, keyDerivation) {
      case (.password(let password), .rncryptor):
        let keys = try RNCryptor.PasswordKeys(password: password)
        return StoreHeader(
          version: version, wrapping: .rncryptor, wrappedKey: try RNCryptor.encrypt(secret: dataKey, passwordKeys: keys)
        )
      case (.password(let password), .scrypt(let parameters)):
        let salt = try RNCryptor.randomSalt(count: CaskFormat.headerScryptSaltLength)
        let keys = try RNCryptor.Keys(password: password, salt: salt, scrypt: parameters)
        return StoreHeader(
          version: version, wrapping: .scrypt(parameters, salt: salt),
          wrappedKey: try RNCryptor.encrypt(secret: dataKey, keys: keys))
      case (.unwrapped, _):
        throw CaskError.wrongCredentialType
      case (.keys(let keys), _):
        return StoreHeader(
          version: version, wrapping: .keys, wrappedKey: try RNCryptor.encrypt(secret: dataKey, keys: keys))
      }
    } catch RNCryptor.Error.emptyPassword {
      throw CaskError.invalidKey(reason: "the password is empty")
    } catch RNCryptor.Error.invalidScryptParameters(let reason) {
      throw CaskError.invalidKey(reason: "scrypt parameters: \(reason)")
    } catch let error as RNCryptor.Error {
      throw CaskError.crypto(error.description)
    }
  }

  /// Unwraps the data key of `header`.
  ///
  /// - Throws: `wrongPassword` when the HMAC does not verify (the CRC already ruled out damage),
  ///   `wrongCredentialType` for the other kind of credential.
  /// - Complexity: two PBKDF2 runs or one scrypt run for a password.
  func unwrap(_ header: StoreHeader, path: String) throws -> RNCryptor.Keys {
    if case .unwrapped(let dataKeys) = self { return dataKeys }
    do {
      let secret: SecureBytes
      switch (self, header.wrapping) {
      case (.password(let password), .rncryptor):
        let salts = try RNCryptor.passwordSalts(of: header.wrappedKey)
        let keys = try RNCryptor.PasswordKeys(
          password: password, encryptionSalt: salts.encryption, hmacSalt: salts.hmac)
        secret = try RNCryptor.decryptSecret(header.wrappedKey, passwordKeys: keys)
      case (.password(let password), .scrypt(let parameters, let salt)):
        let keys = try RNCryptor.Keys(password: password, salt: salt, scrypt: parameters)
        secret = try RNCryptor.decryptSecret(header.wrappedKey, keys: keys)
      case (.keys(let keys), .keys):
        secret = try RNCryptor.decryptSecret(header.wrappedKey, keys: keys)
      case (.password, .keys), (.keys, .rncryptor), (.keys, .scrypt), (.unwrapped, _):
        throw CaskError.wrongCredentialType
      }
      try Self.checkBoundVersion(of: secret, header: header, path: path)
      return try secret.withUnsafeBytes { bytes in
        try RNCryptor.Keys(
          encryptionKey: SecureBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<CaskFormat.dataKeyPartLength])),
          hmacKey: SecureBytes(
            UnsafeRawBufferPointer(rebasing: bytes[CaskFormat.dataKeyPartLength..<CaskFormat.dataKeyLength])))
      }
    } catch RNCryptor.Error.authenticationFailed {
      throw CaskError.wrongPassword
    } catch RNCryptor.Error.emptyPassword {
      throw CaskError.wrongPassword
    } catch let error as RNCryptor.Error {
      throw CaskError.corrupt(file: path, offset: header.messageOffset, reason: error.description)
    }
  }

  /// The wrapped plaintext for `version`: the data key alone before version 5, the data key
  /// and the version from version 5 on.
  private static func bindingVersion(_ version: UInt16, to dataKey: SecureBytes) -> SecureBytes {
    guard version >= CaskFormat.authenticatedVersion else { return dataKey }
    return SecureBytes(count: CaskFormat.dataKeyLength + CaskFormat.wrappedVersionLength) { buffer in
      dataKey.withUnsafeBytes {
        UnsafeMutableRawBufferPointer(rebasing: buffer[0..<CaskFormat.dataKeyLength]).copyMemory(from: $0)
      }
      buffer.storeBytes(of: version.littleEndian, toByteOffset: CaskFormat.dataKeyLength, as: UInt16.self)
    }
  }

  /// Checks an unwrapped plaintext against its header: 64 bytes before version 5, 66 naming
  /// the header's own version from version 5 on.
  ///
  /// - Throws: `integrityViolation` for a version 5 key under a header that says an older
  ///   version (its version field changed back, the CRC fixed) or the reverse; `corrupt` for
  ///   any other length.
  private static func checkBoundVersion(of secret: SecureBytes, header: StoreHeader, path: String) throws {
    let bound = CaskFormat.dataKeyLength + CaskFormat.wrappedVersionLength
    guard secret.count == CaskFormat.dataKeyLength || secret.count == bound else {
      throw CaskError.corrupt(file: path, offset: header.messageOffset, reason: "wrapped data key has the wrong length")
    }
    let written =
      secret.count == bound
      ? secret.withUnsafeBytes { loadLittleEndian($0, at: CaskFormat.dataKeyLength, as: UInt16.self) } : nil
    let headerIsBound = header.version >= CaskFormat.authenticatedVersion
    guard written == nil ? !headerIsBound : written == header.version else {
      let keyVersion = written.map(String.init) ?? "an older version"
      throw CaskError.integrityViolation(
        file: CaskFormat.headerFileName,
        reason:
          "the header says format version \(header.version), its wrapped key was written for version "
          + "\(keyVersion) (a downgraded header)")
    }
  }
}

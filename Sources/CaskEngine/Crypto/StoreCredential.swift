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

  /// Wraps `dataKey` for a new header.
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
      guard secret.count == CaskFormat.dataKeyLength else {
        throw CaskError.corrupt(
          file: path, offset: header.messageOffset, reason: "wrapped data key has the wrong length")
      }
      return try secret.withUnsafeBytes { bytes in
        try RNCryptor.Keys(
          encryptionKey: SecureBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<CaskFormat.dataKeyPartLength])),
          hmacKey: SecureBytes(UnsafeRawBufferPointer(rebasing: bytes[CaskFormat.dataKeyPartLength...])))
      }
    } catch RNCryptor.Error.authenticationFailed {
      throw CaskError.wrongPassword
    } catch RNCryptor.Error.emptyPassword {
      throw CaskError.wrongPassword
    } catch let error as RNCryptor.Error {
      throw CaskError.corrupt(file: path, offset: header.messageOffset, reason: error.description)
    }
  }
}

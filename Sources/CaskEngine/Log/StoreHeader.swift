import Foundation
import RNCryptorCodec

/// The `CASK` file: magic, format version, and the data key wrapped under the user's password
/// or keys (Docs/FORMAT.md, "The header file").
///
/// ```
/// 0 magic "CIPHCASK"(8)  8 version(2)  10 flags(2)  12 wrapped length W(4)  16 wrapped key(W)  16+W crc32c(4)
/// ```
/// The wrapped key is an RNCryptor v3 message whose plaintext is the 64-byte data key; its
/// HMAC is the password verifier. The CRC covers bytes 0..<16+W and tells damage apart from a
/// wrong password.
struct StoreHeader {
  var version: UInt16
  var passwordWrapped: Bool
  var wrappedKey: Data

  func encoded() -> [UInt8] {
    var writer = ByteWriter(capacity: CaskFormat.headerFixedLength + wrappedKey.count + 4)
    writer.append(contentsOf: CaskFormat.headerMagic)
    writer.append(version)
    writer.append(passwordWrapped ? CaskFormat.headerFlagPasswordWrapped : 0)
    writer.append(UInt32(wrappedKey.count))
    writer.append(contentsOf: wrappedKey)
    writer.append(CRC32C.checksum(writer.bytes))
    return writer.bytes
  }

  /// Parses a header file's bytes.
  ///
  /// - Throws: `notACaskStore` without the magic; `unsupportedVersion`; `corrupt` for a bad
  ///   CRC or length.
  static func decode(_ bytes: Data, path: String) throws -> StoreHeader {
    try bytes.withUnsafeBytes { buffer in
      var reader = ByteReader(buffer)
      guard let magic = reader.readBytes(CaskFormat.headerMagic.count), magic.elementsEqual(CaskFormat.headerMagic)
      else { throw CaskError.notACaskStore(path: path) }
      guard let version = reader.readUInt16(), let flags = reader.readUInt16(), let length = reader.readUInt32(),
        let wrapped = reader.readBytes(Int(length)), let crc = reader.readUInt32()
      else { throw CaskError.corrupt(file: path, offset: 0, reason: "header is truncated") }
      guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<reader.offset - 4])) == crc else {
        throw CaskError.corrupt(file: path, offset: 0, reason: "header checksum mismatch")
      }
      guard (CaskFormat.oldestReadableVersion...CaskFormat.formatVersion).contains(version) else {
        throw CaskError.unsupportedVersion(found: Int(version), supported: Int(CaskFormat.formatVersion))
      }
      return StoreHeader(
        version: version, passwordWrapped: flags & CaskFormat.headerFlagPasswordWrapped != 0,
        wrappedKey: Data(wrapped))
    }
  }
}

/// What opens a store: a password (PBKDF2 runs at open) or the caller's own keys.
enum StoreCredential: Sendable {
  case password(SecureBytes)
  case keys(RNCryptor.Keys)

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
  /// - Complexity: two PBKDF2 runs for a password.
  /// - Parameter version: the store's format version, written into the header.
  func wrap(_ dataKey: SecureBytes, version: UInt16 = CaskFormat.formatVersion) throws -> StoreHeader {
    do {
      switch self {
      case .password(let password):
        let keys = try RNCryptor.PasswordKeys(password: password)
        return StoreHeader(
          version: version, passwordWrapped: true,
          wrappedKey: try RNCryptor.encrypt(secret: dataKey, passwordKeys: keys))
      case .keys(let keys):
        return StoreHeader(
          version: version, passwordWrapped: false,
          wrappedKey: try RNCryptor.encrypt(secret: dataKey, keys: keys))
      }
    } catch RNCryptor.Error.emptyPassword {
      throw CaskError.invalidKey(reason: "the password is empty")
    } catch let error as RNCryptor.Error {
      throw CaskError.crypto(error.description)
    }
  }

  /// Unwraps the data key of `header`.
  ///
  /// - Throws: `wrongPassword` when the HMAC does not verify (the CRC already ruled out damage),
  ///   `wrongCredentialType` for the other kind of credential.
  /// - Complexity: two PBKDF2 runs for a password.
  func unwrap(_ header: StoreHeader, path: String) throws -> RNCryptor.Keys {
    do {
      let secret: SecureBytes
      switch self {
      case .password(let password):
        guard header.passwordWrapped else { throw CaskError.wrongCredentialType }
        let salts = try RNCryptor.passwordSalts(of: header.wrappedKey)
        let keys = try RNCryptor.PasswordKeys(
          password: password, encryptionSalt: salts.encryption, hmacSalt: salts.hmac)
        secret = try RNCryptor.decryptSecret(header.wrappedKey, passwordKeys: keys)
      case .keys(let keys):
        guard !header.passwordWrapped else { throw CaskError.wrongCredentialType }
        secret = try RNCryptor.decryptSecret(header.wrappedKey, keys: keys)
      }
      guard secret.count == CaskFormat.dataKeyLength else {
        throw CaskError.corrupt(file: path, offset: 16, reason: "wrapped data key has the wrong length")
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
      throw CaskError.corrupt(file: path, offset: 16, reason: error.description)
    }
  }
}

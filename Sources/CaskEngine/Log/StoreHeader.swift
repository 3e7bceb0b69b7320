import Foundation
import RNCryptorCodec

/// The `CASK` file: magic, format version, and the data key wrapped under the user's password
/// or keys (Docs/FORMAT.md, "The header file").
///
/// ```
/// 0 magic "CIPHCASK"(8)  8 version(2)  10 flags(2)  12 wrapped length W(4)  16 wrapped key(W)  16+W crc32c(4)
/// version 4 (key epochs):  ... 16 wrapped key(W)  16+W ring length R(4)  20+W key ring(R)  20+W+R crc32c(4)
/// version 5:  ... 20+W key ring(R)  20+W+R store identity(16)  36+W+R MAC(32)  68+W+R crc32c(4)
/// ```
/// The wrapped key is an RNCryptor v3 message whose plaintext is the 64-byte data key; its
/// HMAC is the password verifier. With the scrypt flag, scrypt's N, r, p and salt come first
/// and the message is a key message under the keys scrypt derives. The CRC covers every byte
/// before it and tells damage apart from a wrong password. A version 5 header's MAC
/// (`StoreHeader+Authentication.swift`) covers every byte before it under the data key.
struct StoreHeader: Sendable {
  /// What the data key is wrapped under.
  enum Wrapping: Equatable, Sendable {
    /// A key message under the caller's keys.
    case keys
    /// An RNCryptor v3 password message (PBKDF2 keys).
    case rncryptor
    /// A key message under the 64 bytes scrypt derives from the password and `salt`.
    case scrypt(RNCryptor.ScryptParameters, salt: Data)
  }

  /// The header's version: 2 or 3, the store's records' too, or 4 (`keyEpochsVersion`):
  /// version 3 records with key epochs.
  var version: UInt16
  var wrapping: Wrapping
  /// The RNCryptor v3 message that holds the (current epoch's) data key.
  var wrappedKey: Data
  /// Version 4: the key ring (`KeyRing.sealed()`), a key message under the current data key.
  var keyRing: Data?
  /// Version 5: the store's identity (`CaskFormat.storeIdentityLength` random bytes).
  var identity: [UInt8]?
  /// Version 5: HMAC-SHA256 of every byte before it, under the data key's HMAC key
  /// (`authenticated(with:)`); `nil` until computed.
  var authenticator: [UInt8]?
  /// A decoded version 5 header: the bytes its MAC covers, as read. Prevents: a MAC checked
  /// over the fields re-encoded, which drops what a reader ignores (unknown flag bits).
  var coveredAsRead: [UInt8]?

  init(version: UInt16, wrapping: Wrapping, wrappedKey: Data, keyRing: Data? = nil) {
    self.version = version
    self.wrapping = wrapping
    self.wrappedKey = wrappedKey
    self.keyRing = keyRing
  }

  /// The format version of the store's records and hints: 3 for a version 4 or 5 header.
  var recordVersion: UInt16 { min(version, CaskFormat.boundRecordsVersion) }

  /// Where the key ring's message begins in the file.
  var keyRingOffset: UInt64 { UInt64(CaskFormat.headerFixedLength + encodedWrappedLength + 4) }

  private var encodedWrappedLength: Int {
    if case .scrypt = wrapping { return CaskFormat.headerScryptFieldsLength + wrappedKey.count }
    return wrappedKey.count
  }

  init(version: UInt16, passwordWrapped: Bool, wrappedKey: Data) {
    self.init(version: version, wrapping: passwordWrapped ? .rncryptor : .keys, wrappedKey: wrappedKey)
  }

  /// How a password wraps the data key; `nil` for keys.
  var keyDerivation: CaskStore.KeyDerivation? {
    switch wrapping {
    case .keys: return nil
    case .rncryptor: return .rncryptor
    case .scrypt(let parameters, _): return .scrypt(parameters)
    }
  }

  func encoded() -> [UInt8] {
    var flags: UInt16 = 0
    var fields = ByteWriter(capacity: CaskFormat.headerScryptFieldsLength)
    switch wrapping {
    case .keys:
      break
    case .rncryptor:
      flags = CaskFormat.headerFlagPasswordWrapped
    case .scrypt(let parameters, let salt):
      flags = CaskFormat.headerFlagPasswordWrapped | CaskFormat.headerFlagScrypt
      fields.append(parameters.costFactor)
      fields.append(parameters.blockSize)
      fields.append(parameters.parallelism)
      fields.append(contentsOf: salt)
    }
    if keyRing != nil { flags |= CaskFormat.headerFlagKeyRing }
    if identity != nil { flags |= CaskFormat.headerFlagAuthenticated }
    let wrappedLength = fields.bytes.count + wrappedKey.count
    var writer = ByteWriter(capacity: CaskFormat.headerFixedLength + wrappedLength + 8 + (keyRing?.count ?? 0))
    writer.append(contentsOf: CaskFormat.headerMagic)
    writer.append(version)
    writer.append(flags)
    writer.append(UInt32(wrappedLength))
    writer.append(contentsOf: fields.bytes)
    writer.append(contentsOf: wrappedKey)
    if let keyRing {
      writer.append(UInt32(keyRing.count))
      writer.append(contentsOf: keyRing)
    }
    if let identity {
      writer.append(contentsOf: identity)
      writer.append(contentsOf: authenticator ?? [UInt8](repeating: 0, count: CaskFormat.authenticatorLength))
    }
    writer.append(CRC32C.checksum(writer.bytes))
    return writer.bytes
  }

  /// Parses a header file's bytes.
  ///
  /// - Throws: `notACaskStore` without the magic; `unsupportedVersion`; `corrupt` for a bad
  ///   CRC or length, and for scrypt parameters outside `RNCryptor.ScryptParameters`' bounds
  ///   (checked here, before any derivation allocates memory).
  static func decode(_ bytes: Data, path: String) throws -> StoreHeader {
    let (version, flags, wrapped, ring, trailer) = try bytes.withUnsafeBytes { buffer in
      var reader = ByteReader(buffer)
      guard let magic = reader.readBytes(CaskFormat.headerMagic.count), magic.elementsEqual(CaskFormat.headerMagic)
      else { throw CaskError.notACaskStore(path: path) }
      let truncated = CaskError.corrupt(file: path, offset: 0, reason: "header is truncated")
      guard let version = reader.readUInt16(), let flags = reader.readUInt16(), let length = reader.readUInt32(),
        let wrapped = reader.readBytes(Int(length))
      else { throw truncated }
      // Only a version 4 or 5 header has a ring (its flag is then required); before, the bit
      // was written as 0 and ignored. The authenticated flag is read in any version: a version
      // 5 header whose version field was changed back still parses, and its wrapped key then
      // names the downgrade (`StoreCredential.unwrap`).
      let authenticated = flags & CaskFormat.headerFlagAuthenticated != 0
      var ring: Data?
      if (version >= CaskFormat.keyEpochsVersion || authenticated) && flags & CaskFormat.headerFlagKeyRing != 0 {
        guard let ringLength = reader.readUInt32(), let bytes = reader.readBytes(Int(ringLength)) else {
          throw truncated
        }
        ring = Data(bytes)
      }
      var trailer: (identity: [UInt8], authenticator: [UInt8], covered: [UInt8])?
      if authenticated {
        guard let identity = reader.readBytes(CaskFormat.storeIdentityLength) else { throw truncated }
        let covered = Array(buffer[0..<reader.offset])
        guard let authenticator = reader.readBytes(CaskFormat.authenticatorLength) else { throw truncated }
        trailer = (Array(identity), Array(authenticator), covered)
      }
      guard let crc = reader.readUInt32() else { throw truncated }
      guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<reader.offset - 4])) == crc else {
        throw CaskError.corrupt(file: path, offset: 0, reason: "header checksum mismatch")
      }
      return (version, flags, Data(wrapped), ring, trailer)
    }
    guard (CaskFormat.oldestReadableVersion...CaskFormat.authenticatedVersion).contains(version) else {
      throw CaskError.unsupportedVersion(found: Int(version), supported: Int(CaskFormat.authenticatedVersion))
    }
    if version >= CaskFormat.keyEpochsVersion && ring == nil {
      throw CaskError.corrupt(file: path, offset: 10, reason: "a version \(version) header without its key ring")
    }
    if version == CaskFormat.authenticatedVersion && trailer == nil {
      throw CaskError.corrupt(file: path, offset: 10, reason: "a version 5 header without its authenticator")
    }
    var header: StoreHeader
    if flags & CaskFormat.headerFlagPasswordWrapped == 0 {
      header = StoreHeader(version: version, wrapping: .keys, wrappedKey: wrapped)
    } else if flags & CaskFormat.headerFlagScrypt == 0 {
      header = StoreHeader(version: version, wrapping: .rncryptor, wrappedKey: wrapped)
    } else {
      header = try decodeScrypt(wrapped, version: version, path: path)
    }
    header.keyRing = ring
    header.identity = trailer?.identity
    header.authenticator = trailer?.authenticator
    header.coveredAsRead = trailer?.covered
    return header
  }

  /// The scrypt fields and the key message after them.
  private static func decodeScrypt(_ wrapped: Data, version: UInt16, path: String) throws -> StoreHeader {
    let fieldsOffset = UInt64(CaskFormat.headerFixedLength)
    let (parameters, salt) = try wrapped.withUnsafeBytes { buffer in
      var reader = ByteReader(buffer)
      guard let costFactor = reader.readUInt64(), let blockSize = reader.readUInt32(),
        let parallelism = reader.readUInt32(), let salt = reader.readBytes(CaskFormat.headerScryptSaltLength)
      else { throw CaskError.corrupt(file: path, offset: fieldsOffset, reason: "scrypt parameters are truncated") }
      return (
        RNCryptor.ScryptParameters(costFactor: costFactor, blockSize: blockSize, parallelism: parallelism),
        Data(salt)
      )
    }
    do {
      try parameters.validate()
    } catch RNCryptor.Error.invalidScryptParameters(let reason) {
      throw CaskError.corrupt(file: path, offset: fieldsOffset, reason: "scrypt parameters: \(reason)")
    }
    return StoreHeader(
      version: version, wrapping: .scrypt(parameters, salt: salt),
      wrappedKey: Data(wrapped.dropFirst(CaskFormat.headerScryptFieldsLength)))
  }

  /// Where the RNCryptor message begins in the file.
  var messageOffset: UInt64 {
    guard case .scrypt = wrapping else { return UInt64(CaskFormat.headerFixedLength) }
    return UInt64(CaskFormat.headerFixedLength + CaskFormat.headerScryptFieldsLength)
  }
}

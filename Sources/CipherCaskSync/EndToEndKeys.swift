import Foundation
import RNCryptorCodec

/// End-to-end mode's key parameters, kept in the collection's metadata on the server
/// (`data.cipherCask`) so that every device with the passphrase derives the same keys. None of
/// it is secret: `check` is a keyed hash of a fixed text, which tells a wrong passphrase at
/// once instead of as undecryptable records.
struct KeyParameters: Codable, Sendable, Equatable {
  var kdf = "scrypt"
  /// The salt, base64.
  var salt: String
  var n: UInt64
  var r: UInt32
  var p: UInt32
  /// HMAC-SHA256 of `EndToEndKeys.checkText` under the naming key, base64.
  var check: String

  var scrypt: RNCryptor.ScryptParameters {
    RNCryptor.ScryptParameters(costFactor: n, blockSize: r, parallelism: p)
  }
}

/// The keys of end-to-end mode, from the passphrase through scrypt: 96 bytes, split into the
/// RNCryptor v3 encryption and HMAC keys that seal each record's payload, and the key of the
/// keyed hash that names records (so the server never sees a local id).
struct EndToEndKeys: Sendable {
  let message: RNCryptor.Keys
  let naming: SecureBytes
  static let checkText = Data("CipherCask end-to-end key check".utf8)

  /// Derives the keys for `parameters`.
  ///
  /// - Throws: `SyncError.wrongPassphrase` when the parameters' check does not match;
  ///   `RNCryptor.Error` for parameters out of bounds.
  init(passphrase: String, parameters: KeyParameters) throws {
    guard parameters.kdf == "scrypt", let salt = Data(base64Encoded: parameters.salt) else {
      throw SyncError.decoding("the collection's end-to-end key parameters are not scrypt's")
    }
    let bytes = try RNCryptor.scrypt(
      password: SecureBytes(utf8: passphrase), salt: salt, parameters: parameters.scrypt, count: 96)
    let parts = bytes.withUnsafeBytes { raw in
      (SecureBytes(raw[0..<32]), SecureBytes(raw[32..<64]), SecureBytes(raw[64..<96]))
    }
    message = try RNCryptor.Keys(encryptionKey: parts.0, hmacKey: parts.1)
    naming = parts.2
    let check = try RNCryptor.authenticationCode(of: Self.checkText, key: naming)
    guard check.base64EncodedString() == parameters.check else { throw SyncError.wrongPassphrase }
  }

  /// New parameters (a random salt) for `passphrase`.
  static func newParameters(
    passphrase: String, scrypt: RNCryptor.ScryptParameters = .interactive
  ) throws -> KeyParameters {
    let salt = try RNCryptor.randomSalt(count: 16)
    let bytes = try RNCryptor.scrypt(password: SecureBytes(utf8: passphrase), salt: salt, parameters: scrypt, count: 96)
    let naming = bytes.withUnsafeBytes { SecureBytes($0[64..<96]) }
    let check = try RNCryptor.authenticationCode(of: checkText, key: naming)
    return KeyParameters(
      salt: salt.base64EncodedString(), n: scrypt.costFactor, r: scrypt.blockSize, p: scrypt.parallelism,
      check: check.base64EncodedString())
  }

  /// The record id of a local id: 64 hex digits of its keyed hash.
  func recordID(for id: String) throws -> String {
    try RNCryptor.authenticationCode(of: Data(id.utf8), key: naming).map { String(format: "%02x", $0) }.joined()
  }
}

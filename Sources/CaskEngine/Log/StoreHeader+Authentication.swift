import Foundation
import RNCryptorCodec

/// The MAC that ends a version 5 header (Docs/FORMAT.md, section 3b): HMAC-SHA256, under the
/// HMAC half of the data key the header wraps, of every byte before it (magic, version,
/// flags, key derivation parameters and salt, wrapped key, key ring, store identity). Open
/// checks it right after the data key is unwrapped, before anything else is read, so a
/// changed version, flag, parameter or identity is refused, not followed.
///
/// The bytes begin with the magic "CIPHCASK", never with an RNCryptor message's version byte
/// (3): no message's HMAC input equals a header's, so neither MAC can stand in for the other.
extension StoreHeader {
  /// This header with its MAC computed under `keys` (the data key it wraps); unchanged for a
  /// header before version 5. Every writer of a version 5 header calls it after its last change.
  ///
  /// - Throws: `CaskError.crypto` when libcrypto fails.
  func authenticated(with keys: RNCryptor.Keys) throws -> StoreHeader {
    guard identity != nil else { return self }
    var copy = self
    copy.coveredAsRead = nil
    copy.authenticator = try Self.authenticator(of: copy.coveredBytes(), keys: keys)
    return copy
  }

  /// Checks a version 5 header's MAC under the data key it unwrapped; nothing before version 5.
  ///
  /// - Throws: `CaskError.integrityViolation` when it does not match: the password opened the
  ///   wrapped key, so the header's other fields were changed by someone without it.
  func checkAuthenticator(keys: RNCryptor.Keys) throws {
    guard identity != nil else { return }
    let expected = try Self.authenticator(of: coveredAsRead ?? coveredBytes(), keys: keys)
    guard let authenticator, constantTimeEqual(expected, authenticator) else {
      throw CaskError.integrityViolation(
        file: CaskFormat.headerFileName,
        reason: "the header does not authenticate under its data key (a field was changed)")
    }
  }

  /// Every byte before the MAC.
  private func coveredBytes() -> [UInt8] {
    Array(encoded().dropLast(4 + CaskFormat.authenticatorLength))
  }

  /// HMAC-SHA256 of `bytes` under the HMAC half of `keys`.
  static func authenticator(of bytes: [UInt8], keys: RNCryptor.Keys) throws -> [UInt8] {
    do {
      return Array(try RNCryptor.authenticationCode(of: Data(bytes), key: keys.hmacKey))
    } catch {
      throw CaskError.crypto(String(describing: error))
    }
  }
}

/// A version 5 store's identity: random bytes made at creation and again for every copy that
/// keeps the data key (a backup), so that the two are told apart by what each seals.
enum StoreIdentity {
  /// `CaskFormat.storeIdentityLength` random bytes.
  ///
  /// - Throws: `CaskError.crypto` when the system's random source fails.
  static func random() throws -> [UInt8] {
    do {
      return Array(try RNCryptor.randomSalt(count: CaskFormat.storeIdentityLength))
    } catch {
      throw CaskError.crypto(String(describing: error))
    }
  }
}

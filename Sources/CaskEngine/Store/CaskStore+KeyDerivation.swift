import Foundation
import RNCryptorCodec

extension CaskStore {
  /// How a password turns into the keys that wrap a store's data key in its header
  /// (Docs/FORMAT.md, section 3; Docs/SECURITY.md for what a guess costs with each).
  public enum KeyDerivation: Sendable, Hashable {
    /// An RNCryptor v3 password message: PBKDF2-HMAC-SHA1, 10,000 iterations per key (two
    /// keys). Any RNCryptor v3 implementation opens the header with the password alone; a
    /// guess costs milliseconds and no memory.
    case rncryptor
    /// scrypt with these parameters and a random 16-byte salt, both stored in the header;
    /// the data key is then in a key message under the 64 derived bytes.
    case scrypt(RNCryptor.ScryptParameters)

    /// What new password stores get: scrypt with `RNCryptor.ScryptParameters.interactive`
    /// (N = 2^15, r = 8, p = 1: 32 MiB).
    public static let standard = KeyDerivation.scrypt(.interactive)

    /// Its name on the command line and in reports: `rncryptor` or `scrypt`.
    public var name: String {
      switch self {
      case .rncryptor: return "rncryptor"
      case .scrypt: return "scrypt"
      }
    }
  }

  /// How the header wraps the data key under the password: what the last open read or the
  /// last password change wrote; `nil` for a store wrapped under keys.
  public var keyDerivation: KeyDerivation? {
    headerKeyDerivation.withLock { $0 }
  }
}

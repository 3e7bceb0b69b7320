import Foundation
import Synchronization

extension RNCryptor {
  /// One password and the keys derived from it, per salt pair, so that handling many password
  /// messages costs one PBKDF2 pair per distinct salt pair instead of one per message.
  ///
  /// - `encrypt(_:)` writes password-format messages under one salt pair chosen at random the
  ///   first time (see `PasswordKeys` for why reusing it is safe).
  /// - `decrypt(_:)` reads password messages with any salts, deriving keys the first time a
  ///   salt pair is seen and reusing them after.
  ///
  /// Thread-safe. The password is kept in a wiping buffer; derived keys are evicted, oldest
  /// first, beyond `capacity` salt pairs.
  public final class PasswordKeyCache: Sendable {
    private struct SaltPair: Hashable {
      let encryption: Data
      let hmac: Data
    }

    private struct State {
      var entries: [SaltPair: PasswordKeys] = [:]
      var order: [SaltPair] = []
      var writing: PasswordKeys?
    }

    private let password: SecureBytes
    private let capacity: Int
    private let state = Mutex(State())

    /// - Parameters:
    ///   - password: the password; kept in a wiping buffer.
    ///   - capacity: how many salt pairs' keys to keep (at least 1).
    /// - Throws: `.emptyPassword`.
    public convenience init(password: String, capacity: Int = 64) throws {
      try self.init(password: SecureBytes(utf8: password), capacity: capacity)
    }

    /// A cache over a password already held in a wiping buffer.
    public init(password: SecureBytes, capacity: Int = 64) throws {
      guard password.count > 0 else { throw Error.emptyPassword }
      self.password = password
      self.capacity = Swift.max(1, capacity)
    }

    /// Seeds the cache with keys derived elsewhere for this password.
    public func insert(_ keys: PasswordKeys) {
      state.withLock { Self.remember(keys, in: &$0, capacity: capacity) }
    }

    /// The keys for a salt pair, derived on first use.
    ///
    /// - Complexity: two PBKDF2 runs on a miss, a hash lookup on a hit.
    public func keys(encryptionSalt: Data, hmacSalt: Data) throws -> PasswordKeys {
      let pair = SaltPair(encryption: encryptionSalt, hmac: hmacSalt)
      if let found = state.withLock({ Self.lookup(pair, in: $0) }) { return found }
      // Derive outside the lock so other salt pairs are not held up by PBKDF2.
      let derived = try PasswordKeys(password: password, encryptionSalt: encryptionSalt, hmacSalt: hmacSalt)
      state.withLock { Self.remember(derived, in: &$0, capacity: capacity) }
      return derived
    }

    /// The keys `encrypt(_:)` uses: a random salt pair chosen and derived on first call.
    public func writingKeys() throws -> PasswordKeys {
      if let keys = state.withLock({ $0.writing }) { return keys }
      let derived = try PasswordKeys(password: password)
      return state.withLock { state in
        if let existing = state.writing { return existing }
        state.writing = derived
        Self.remember(derived, in: &state, capacity: capacity)
        return derived
      }
    }

    /// Encrypts into a password message without a key derivation after the first call.
    public func encrypt(_ plaintext: Data) throws -> Data {
      try RNCryptor.encrypt(plaintext, passwordKeys: writingKeys())
    }

    /// Decrypts a password message, deriving keys only for a salt pair not seen before.
    ///
    /// - Throws: as `RNCryptor.decrypt(_:password:)`.
    public func decrypt(_ message: Data) throws -> Data {
      let salts = try RNCryptor.passwordSalts(of: message)
      let keys = try keys(encryptionSalt: salts.encryption, hmacSalt: salts.hmac)
      return try RNCryptor.open(message, keys: keys.keys, type: .password)
    }

    private static func remember(_ keys: PasswordKeys, in state: inout State, capacity: Int) {
      let pair = SaltPair(encryption: keys.encryptionSalt, hmac: keys.hmacSalt)
      guard state.entries.updateValue(keys, forKey: pair) == nil else { return }
      state.order.append(pair)
      if state.order.count > capacity {
        state.entries[state.order.removeFirst()] = nil
      }
    }

    private static func lookup(_ pair: SaltPair, in state: State) -> PasswordKeys? {
      if let found = state.entries[pair] { return found }
      guard let writing = state.writing, writing.encryptionSalt == pair.encryption, writing.hmacSalt == pair.hmac
      else { return nil }
      return writing
    }
  }
}

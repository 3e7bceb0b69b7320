import Foundation
import RNCryptorCodec
import Synchronization

/// How a peer encrypts each value it stores (the CoreDataGenericModule design: the database
/// is plain, each value is an RNCryptor message).
public enum ValueCipher: Sendable {
  /// Password messages whose keys are derived once and cached: the strongest form of that
  /// design, the same AES and HMAC work per value as CipherCask; written under `writing`.
  case derivedOnce(RNCryptor.PasswordKeyCache, writing: RNCryptor.PasswordKeys)
  /// `RNCryptor.encrypt(_:password:)` per value: every write and read runs PBKDF2 twice.
  case pbkdf2PerValue(String)

  /// The password of every benchmark store and message.
  public static let password = "cask-bench password"

  /// The file in a store's folder that keeps the salt pair its values are written under.
  public static let saltsFile = "rncryptor-salts"

  /// A cipher whose keys are already derived, as an application derives them at open. With
  /// `directory`, the salt pair is kept there and its keys derived once per process, so that a
  /// timed reopen leaves the derivation out, as CipherCask's peer does.
  public static func derivedOnce(saltsIn directory: String? = nil) throws -> ValueCipher {
    let cache = try RNCryptor.PasswordKeyCache(password: password)
    let path = directory.map { $0 + "/" + saltsFile }
    let writing: RNCryptor.PasswordKeys
    if let path, let salts = FileManager.default.contents(atPath: path), salts.count % 2 == 0, !salts.isEmpty {
      writing = try derivedKeys.withLock { derived in
        if let keys = derived[salts] { return keys }
        let keys = try RNCryptor.PasswordKeys(
          password: password, encryptionSalt: Data(salts.prefix(salts.count / 2)),
          hmacSalt: Data(salts.suffix(salts.count / 2)))
        derived[salts] = keys
        return keys
      }
    } else {
      writing = try RNCryptor.PasswordKeys(password: password)
      let salts = writing.encryptionSalt + writing.hmacSalt
      if let path { try salts.write(to: URL(fileURLWithPath: path)) }
      derivedKeys.withLock { $0[salts] = writing }
    }
    cache.insert(writing)
    return .derivedOnce(cache, writing: writing)
  }

  /// The keys derived so far in this process, by salt pair (encryption salt, then HMAC salt).
  private static let derivedKeys = Mutex<[Data: RNCryptor.PasswordKeys]>([:])

  public func seal(_ plaintext: Data) throws -> Data {
    switch self {
    case .derivedOnce(_, let writing): try RNCryptor.encrypt(plaintext, passwordKeys: writing)
    case .pbkdf2PerValue(let password): try RNCryptor.encrypt(plaintext, password: password)
    }
  }

  public func open(_ message: Data) throws -> Data {
    switch self {
    case .derivedOnce(let cache, _): try cache.decrypt(message)
    case .pbkdf2PerValue(let password): try RNCryptor.decrypt(message, password: password)
    }
  }
}

/// Any store, with each value sealed by a `ValueCipher` on the way in and opened on the way out.
/// Keys stay plain (as in that design); CipherCask also encrypts its keys.
public final class EncryptedStore: KeyValueStore {
  let base: any KeyValueStore
  let cipher: ValueCipher

  public init(_ base: any KeyValueStore, cipher: ValueCipher) {
    self.base = base
    self.cipher = cipher
  }

  public func put(_ value: Data, forKey key: String) throws {
    try base.put(cipher.seal(value), forKey: key)
  }

  public func get(_ key: String) throws -> Data? {
    try base.get(key).map(cipher.open)
  }

  public func delete(_ key: String) throws {
    try base.delete(key)
  }

  public func write(_ pairs: [(key: String, value: Data)]) throws {
    try base.write(pairs.map { (key: $0.key, value: try cipher.seal($0.value)) })
  }

  public func makeReader() throws -> any KeyValueReader {
    EncryptedReader(base: try base.makeReader(), cipher: cipher)
  }

  public func compact() throws -> Bool { try base.compact() }
  public func sync() throws { try base.sync() }
  public func close() throws { try base.close() }
}

final class EncryptedReader: KeyValueReader {
  let base: any KeyValueReader
  let cipher: ValueCipher

  init(base: any KeyValueReader, cipher: ValueCipher) {
    self.base = base
    self.cipher = cipher
  }

  func get(_ key: String) throws -> Data? {
    try base.get(key).map(cipher.open)
  }
}

/// Opens an engine and wraps it in `EncryptedStore`: "lmdb" becomes "lmdb+rncryptor".
public struct EncryptedOpener: StoreOpener {
  let base: any StoreOpener
  let perValuePBKDF2: Bool

  /// - Parameter perValuePBKDF2: the per-value PBKDF2 design instead of keys derived once.
  public init(_ base: any StoreOpener, perValuePBKDF2: Bool = false) {
    self.base = base
    self.perValuePBKDF2 = perValuePBKDF2
  }

  public var name: String { base.name + (perValuePBKDF2 ? "+pbkdf2" : "+rncryptor") }

  public var setup: String {
    base.setup
      + (perValuePBKDF2
        ? "; each value an RNCryptor password message with its own PBKDF2"
        : "; each value an RNCryptor password message, keys derived once at open (one salt pair per store)")
  }

  public var compaction: String { base.compaction }

  public func open(directory: String, durability: Durability) throws -> any KeyValueStore {
    let cipher =
      perValuePBKDF2
      ? ValueCipher.pbkdf2PerValue(ValueCipher.password) : try ValueCipher.derivedOnce(saltsIn: directory)
    return EncryptedStore(try base.open(directory: directory, durability: durability), cipher: cipher)
  }
}

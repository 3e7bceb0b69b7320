// peer-cask: CipherCask for `cask-bench peers` and `cask-bench objects`, measured by the same
// driver and in the same way (its own process) as every other engine.
import CipherCask
import Foundation
import PeerKit

/// A `CaskStore` with default options but the durability under test (automatic compaction on,
/// 256 MiB segments): keys and values are both encrypted.
///
/// Opened with keys derived from the password once per process (one PBKDF2 pair, as the
/// `+rncryptor` peers derive their value keys once per store and process): `open` then
/// compares the engines, not the password functions (`cask-bench recovery` measures a
/// password open's derivation: scrypt's 100-250 ms, or a PBKDF2 pair's).
final class CaskKeyValueStore: KeyValueStore {
  let store: CaskStore

  /// The store keys, derived from the benchmark password and fixed salts once per process.
  private static let keys = Result {
    try RNCryptor.PasswordKeys(
      password: ValueCipher.password, encryptionSalt: Data("cbsalt-1".utf8),
      hmacSalt: Data("cbsalt-2".utf8)
    ).keys
  }

  init(directory: String, durability: Durability) throws {
    let options = CaskStore.Options(durability: durability == .always ? .always : .never)
    store = try CaskStore(path: directory, keys: try Self.keys.get(), options: options)
  }

  func put(_ value: Data, forKey key: String) throws { try store.put(value, forKey: key) }
  func get(_ key: String) throws -> Data? { try store.get(key) }
  func delete(_ key: String) throws { _ = try store.delete(key) }

  func write(_ pairs: [(key: String, value: Data)]) throws {
    try store.batch { batch in
      for pair in pairs { try batch.put(pair.value, forKey: pair.key) }
    }
  }

  func makeReader() throws -> any KeyValueReader { self }

  func compact() throws -> Bool {
    _ = try store.compact()
    return true
  }

  func sync() throws { try store.sync() }
  func close() throws { try store.close() }
}

struct CaskOpener: StoreOpener {
  var name: String { "ciphercask" }
  var setup: String {
    "CipherCask CaskStore, default options (automatic compaction, 256 MiB segments), durability .never or .always,"
      + " keys derived from the password once per process (one PBKDF2 pair, as the +rncryptor peers derive theirs);"
      + " fills in batches of 1000 puts (store.batch), other writes one call each; keys and values encrypted"
  }
  var compaction: String { "CaskStore.compact()" }

  func open(directory: String, durability: Durability) throws -> any KeyValueStore {
    try CaskKeyValueStore(directory: directory, durability: durability)
  }
}

/// A typed collection of `BenchObject`s.
final class CaskObjectStore: ObjectStore {
  let store: CaskStore
  let collection: CaskCollection<BenchObject>

  init(directory: String, durability: Durability, coder: any CaskCoder) throws {
    let options = CaskStore.Options(durability: durability == .always ? .always : .never)
    store = try CaskStore(path: directory, password: ValueCipher.password, options: options)
    collection = store.collection(BenchObject.self, coder: coder)
  }

  func save(_ object: BenchObject) throws { try collection.save(object) }
  func save(contentsOf objects: ArraySlice<BenchObject>) throws { try collection.save(contentsOf: objects) }
  func get(id: String) throws -> BenchObject? { try collection.get(id: id) }
  func all() throws -> [BenchObject] { try collection.all() }
  func filter(_ isIncluded: (BenchObject) throws -> Bool) throws -> [BenchObject] {
    try collection.filter(isIncluded)
  }
  func close() throws { try store.close() }
}

/// A collection with one of the coders: the default (`BinaryCaskCoder`), JSON or property lists.
struct CaskObjectOpener: ObjectStoreOpener {
  let name: String
  let coderName: String
  let coder: @Sendable () -> any CaskCoder

  var setup: String {
    "CipherCask store.collection(BenchObject.self) with \(coderName); save(_:) and save(contentsOf:)"
  }

  func open(directory: String, durability: Durability) throws -> any ObjectStore {
    try CaskObjectStore(directory: directory, durability: durability, coder: coder())
  }
}

PeerMain.run([
  CaskOpener(),
  CaskObjectOpener(name: "ciphercask", coderName: "BinaryCaskCoder (the default)") { BinaryCaskCoder() },
  CaskObjectOpener(name: "ciphercask+json", coderName: "JSONCaskCoder") { JSONCaskCoder() },
  CaskObjectOpener(name: "ciphercask+plist", coderName: "PropertyListCaskCoder") { PropertyListCaskCoder() },
])

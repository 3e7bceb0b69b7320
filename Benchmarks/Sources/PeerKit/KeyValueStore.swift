import Foundation

/// When a peer's writes reach the disk; every engine in one comparison runs with the same one.
///
/// | engine     | `.never`                         | `.always`                          |
/// |------------|----------------------------------|------------------------------------|
/// | CipherCask | `Durability.never`               | `Durability.always` (group commit) |
/// | SQLite     | WAL, `synchronous = OFF`         | WAL, `synchronous = FULL`          |
/// | SQLCipher  | WAL, `synchronous = OFF`         | WAL, `synchronous = FULL`          |
/// | LMDB       | `MDB_NOSYNC`                     | default (sync at commit)           |
/// | LevelDB    | `WriteOptions.sync = false`      | `WriteOptions.sync = true`         |
public enum Durability: String, Codable, Sendable, CaseIterable {
  case never, always
}

/// One engine opened on one directory, as `KVRunner` sees it. `Sendable`: `readwhilewriting`
/// and durable puts call `put` from several threads, and an engine that needs it serializes
/// them itself, as an application would (a connection behind a lock for SQLite).
public protocol KeyValueStore: AnyObject, Sendable, KeyValueReader {
  /// `put` and `delete` are one transaction each; `write` is one transaction (SQLite, LMDB),
  /// write batch (LevelDB) or batch (CipherCask): the engines' recommended way to load data.
  func put(_ value: Data, forKey key: String) throws
  func delete(_ key: String) throws
  func write(_ pairs: [(key: String, value: Data)]) throws
  /// A handle for reads on another thread while this store is written: a second connection for
  /// SQLite, the store itself where the engine's handle is thread-safe.
  func makeReader() throws -> any KeyValueReader
  /// Runs the engine's own compaction and waits for it; `false` when it has none (LMDB).
  func compact() throws -> Bool
  /// Makes everything written so far durable (before disk usage is measured).
  func sync() throws
  func close() throws
}

/// Reads from one thread.
public protocol KeyValueReader: AnyObject {
  func get(_ key: String) throws -> Data?
}

/// One engine of a comparison, as a `peer-*` executable offers it to `PeerMain.run`: each kind
/// of comparison (key-value, objects, queries) has its protocol below this one.
public protocol PeerOpener: Sendable {
  /// The engine's name in tables and reports ("lmdb+rncryptor"), and how it is set up.
  var name: String { get }
  var setup: String { get }
}

/// Opens one engine of the key-value comparison.
public protocol StoreOpener: PeerOpener {
  /// What `KeyValueStore.compact()` runs (`VACUUM`, `CompactRange`), or `none`.
  var compaction: String { get }
  /// Opens (creating if needed) the store in `directory`. Keys from a password are derived at
  /// most once per process, so that `open` times the engine's own work.
  func open(directory: String, durability: Durability) throws -> any KeyValueStore
}

/// Thrown by a peer when its engine reports an error or a workload's check fails.
public struct PeerError: Error, CustomStringConvertible {
  public let description: String

  public init(_ description: String) {
    self.description = description
  }
}

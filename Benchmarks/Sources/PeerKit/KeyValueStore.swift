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
  /// The operating system decides when writes reach the disk.
  case never
  /// Every write is on disk before it returns.
  case always
}

/// One engine opened on one directory, as the workload driver sees it.
///
/// Implementations are `Sendable`: the multi-threaded workloads (`readwhilewriting`, durable
/// puts with 8 writers) call `put` from several threads at once, and an engine that needs it
/// serializes them itself, as an application would (a connection behind a lock for SQLite).
public protocol KeyValueStore: AnyObject, Sendable, KeyValueReader {
  /// Writes one value, as one transaction of its own.
  func put(_ value: Data, forKey key: String) throws
  /// Removes a key, as one transaction of its own.
  func delete(_ key: String) throws
  /// Writes every pair as one transaction (SQLite, LMDB), write batch (LevelDB) or batch
  /// (CipherCask): the engines' recommended way to load data.
  func write(_ pairs: [(key: String, value: Data)]) throws
  /// A handle for reads on another thread while this store is written: a second connection for
  /// SQLite, the store itself where the engine's handle is thread-safe.
  func makeReader() throws -> any KeyValueReader
  /// Runs the engine's own compaction and waits for it.
  ///
  /// - Returns: `false` when the engine has none (LMDB).
  func compact() throws -> Bool
  /// Makes everything written so far durable (used before disk usage is measured).
  func sync() throws
  /// Closes the store; no call follows.
  func close() throws
}

/// Reads from one thread.
public protocol KeyValueReader: AnyObject {
  /// The value of `key`, or `nil` if it has none.
  func get(_ key: String) throws -> Data?
}

/// One engine of a comparison, as a `peer-*` executable offers it: each kind of comparison
/// (key-value, objects, queries) has its protocol below this one, and a peer lists every
/// engine it has, of whatever kind, in one array for `PeerMain.run`.
public protocol PeerOpener: Sendable {
  /// The engine's name in tables and reports ("lmdb", "lmdb+rncryptor", ...).
  var name: String { get }
  /// One line on how the engine is set up, printed in reports.
  var setup: String { get }
}

/// Opens one engine of the key-value comparison.
public protocol StoreOpener: PeerOpener {
  /// What `KeyValueStore.compact()` runs (`VACUUM`, `CompactRange`), or `none`.
  var compaction: String { get }
  /// Opens (creating if needed) the store in `directory`, which exists. Keys derived from a
  /// password are derived at most once per process, so that `open` times the engine's own
  /// work, as an application that keeps its derived keys would see it.
  func open(directory: String, durability: Durability) throws -> any KeyValueStore
}

/// Thrown by a peer when its engine reports an error or a workload's check fails.
public struct PeerError: Error, CustomStringConvertible {
  public let description: String

  public init(_ description: String) {
    self.description = description
  }
}

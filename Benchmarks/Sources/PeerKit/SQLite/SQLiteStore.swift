import Foundation
import Synchronization

/// How an SQL peer opens its database: the library, the pragmas it needs first (SQLCipher's
/// key), and what to call it.
public struct SQLiteSetup: Sendable {
  public var library: SQLiteLibrary
  /// Run on every new connection before anything else.
  public var connectionPragmas: [String]
  public var name: String
  public var description: String

  public init(library: SQLiteLibrary, connectionPragmas: [String], name: String, description: String) {
    self.library = library
    self.connectionPragmas = connectionPragmas
    self.name = name
    self.description = description
  }

  /// Opens `file`, sets WAL and the durability's `synchronous`, and creates `table` if missing.
  func connect(file: String, durability: Durability, table: String) throws -> SQLiteConnection {
    let connection = try SQLiteConnection(path: file, library: library, pragmas: connectionPragmas)
    try connection.execute("PRAGMA journal_mode = WAL")
    try connection.execute("PRAGMA synchronous = \(durability == .always ? "FULL" : "OFF")")
    try connection.execute("CREATE TABLE IF NOT EXISTS \(table)")
    return connection
  }
}

/// The key-value table `kv(key TEXT PRIMARY KEY, value BLOB)` in WAL mode.
///
/// One connection does every write, behind a lock, as an app shares one connection between
/// threads (SQLite serializes writers anyway); `makeReader()` opens a second connection, which
/// WAL lets read while the first writes. Statements are prepared once.
final class SQLiteStore: KeyValueStore, @unchecked Sendable {
  private let connection: SQLiteConnection
  private let setup: SQLiteSetup
  private let file: String
  private let insert: SQLiteStatement
  private let select: SQLiteStatement
  private let remove: SQLiteStatement
  private let begin: SQLiteStatement
  private let commit: SQLiteStatement
  private let lock = Mutex(())

  static let table = "kv (key TEXT PRIMARY KEY, value BLOB)"

  init(setup: SQLiteSetup, directory: String, durability: Durability) throws {
    self.setup = setup
    file = directory + "/kv.sqlite"
    connection = try setup.connect(file: file, durability: durability, table: Self.table)
    insert = try connection.prepare("INSERT OR REPLACE INTO kv (key, value) VALUES (?1, ?2)")
    select = try connection.prepare("SELECT value FROM kv WHERE key = ?1")
    remove = try connection.prepare("DELETE FROM kv WHERE key = ?1")
    begin = try connection.prepare("BEGIN")
    commit = try connection.prepare("COMMIT")
  }

  func put(_ value: Data, forKey key: String) throws {
    try lock.withLock { _ in _ = try insert.with(text: key, blob: value) { try insert.step() } }
  }

  func get(_ key: String) throws -> Data? {
    try lock.withLock { _ in try select.with(text: key) { try select.step() ? select.blob(0) : nil } }
  }

  func delete(_ key: String) throws {
    try lock.withLock { _ in _ = try remove.with(text: key) { try remove.step() } }
  }

  func write(_ pairs: [(key: String, value: Data)]) throws {
    try lock.withLock { _ in
      _ = try begin.step()
      _ = begin.library.reset(begin.handle)
      for pair in pairs {
        _ = try insert.with(text: pair.key, blob: pair.value) { try insert.step() }
      }
      _ = try commit.step()
      _ = commit.library.reset(commit.handle)
    }
  }

  func makeReader() throws -> any KeyValueReader {
    try SQLiteReader(connection: SQLiteConnection(path: file, library: setup.library, pragmas: setup.connectionPragmas))
  }

  /// `VACUUM` rebuilds the file without free pages; in WAL mode the rebuilt pages go through the
  /// WAL, so a `wal_checkpoint(TRUNCATE)` follows to give that space back too.
  func compact() throws -> Bool {
    try lock.withLock { _ in
      try connection.execute("VACUUM")
      try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
    return true
  }

  func sync() throws {}

  func close() throws {
    lock.withLock { _ in connection.close() }
  }
}

/// A second connection that only reads.
final class SQLiteReader: KeyValueReader {
  private let connection: SQLiteConnection
  private let select: SQLiteStatement

  init(connection: SQLiteConnection) throws {
    self.connection = connection
    select = try connection.prepare("SELECT value FROM kv WHERE key = ?1")
  }

  func get(_ key: String) throws -> Data? {
    try select.with(text: key) { try select.step() ? select.blob(0) : nil }
  }

  deinit {
    connection.close()
  }
}

/// Opens the SQL key-value peer.
public struct SQLiteOpener: StoreOpener {
  let sqlite: SQLiteSetup

  public init(_ setup: SQLiteSetup) {
    sqlite = setup
  }

  public var name: String { sqlite.name }
  public var setup: String {
    sqlite.description
      + "; table kv (key TEXT PRIMARY KEY, value BLOB), WAL, synchronous OFF (never) or FULL (always),"
      + " fills in transactions of 1000 rows, other writes one per transaction, one connection behind a lock"
  }
  public var compaction: String { "VACUUM + wal_checkpoint(TRUNCATE)" }

  public func open(directory: String, durability: Durability) throws -> any KeyValueStore {
    try SQLiteStore(setup: sqlite, directory: directory, durability: durability)
  }
}

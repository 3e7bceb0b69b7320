import Foundation

/// One SQLite (or SQLCipher) connection, used by one thread at a time.
final class SQLiteConnection {
  let library: SQLiteLibrary
  let handle: OpaquePointer
  /// The statements prepared to be kept, which `close()` finalizes.
  private var kept: [SQLiteStatement] = []

  /// Opens `path` read-write (creating it), then runs `pragmas` in order (`PRAGMA key` first
  /// for SQLCipher).
  init(path: String, library: SQLiteLibrary, pragmas: [String]) throws {
    self.library = library
    var handle: OpaquePointer?
    let flags = SQLiteLibrary.openFlags
    let status = library.openV2(path, &handle, flags, nil)
    guard status == SQLiteLibrary.ok, let handle else {
      _ = library.closeV2(handle)
      throw PeerError("sqlite: cannot open the database (status \(status))")
    }
    self.handle = handle
    _ = library.busyTimeout(handle, 10_000)
    for pragma in pragmas { try execute(pragma) }
  }

  /// Runs `sql` to completion, ignoring any rows.
  func execute(_ sql: String) throws {
    let statement = try prepare(sql, kept: false)
    defer { statement.finalize() }
    while try statement.step() {}
  }

  /// Whether `fill` completed on this database before (a row in `marker`, a table made here if
  /// missing): a peer asked again for the same events keeps the ones it wrote.
  func wasFilled() throws -> Bool {
    try execute("CREATE TABLE IF NOT EXISTS marker (filled INTEGER)")
    let marker = try prepare("SELECT count(*) FROM marker", kept: false)
    defer { marker.finalize() }
    var markers: Int64 = 0
    try marker.run([]) { markers = marker.int64(0) }
    return markers > 0
  }

  /// Runs `insert` on each of `items`, 2,000 to a transaction, then marks the database filled.
  func fill<Item>(_ items: [Item], insert: (Item) throws -> Void) throws {
    for start in stride(from: 0, to: items.count, by: 2_000) {
      try execute("BEGIN")
      for item in items[start..<min(items.count, start + 2_000)] { try insert(item) }
      try execute("COMMIT")
    }
    try execute("INSERT INTO marker (filled) VALUES (1)")
  }

  /// Prepares `sql`; a statement not `kept` is finalized by its user.
  func prepare(_ sql: String, kept keep: Bool = true) throws -> SQLiteStatement {
    var statement: OpaquePointer?
    let status = library.prepareV2(handle, sql, -1, &statement, nil)
    guard status == SQLiteLibrary.ok, let statement else { throw error("prepare", status) }
    let prepared = SQLiteStatement(connection: self, handle: statement)
    if keep { kept.append(prepared) }
    return prepared
  }

  func error(_ what: String, _ status: Int32) -> PeerError {
    let message = library.errmsg(handle).map { String(cString: $0) } ?? "unknown"
    return PeerError("sqlite: \(what) failed (status \(status)): \(message)")
  }

  func close() {
    for statement in kept { statement.finalize() }
    _ = library.closeV2(handle)
  }
}

/// A prepared statement, reset after each use so it can run again.
final class SQLiteStatement {
  unowned let connection: SQLiteConnection
  let handle: OpaquePointer
  var library: SQLiteLibrary { connection.library }

  init(connection: SQLiteConnection, handle: OpaquePointer) {
    self.connection = connection
    self.handle = handle
  }

  /// Steps once.
  ///
  /// - Returns: `true` when a row is ready, `false` when the statement is done.
  func step() throws -> Bool {
    let status = library.step(handle)
    if status == SQLiteLibrary.row { return true }
    if status == SQLiteLibrary.done { return false }
    throw connection.error("step", status)
  }

  /// Binds `text` to parameter 1 and `blob` (if any) to parameter 2 without copying either
  /// (`SQLITE_STATIC`), runs `body`, and resets: the buffers only live inside the call.
  func with<Result>(text: String, blob: Data? = nil, _ body: () throws -> Result) throws -> Result {
    var text = text
    defer { _ = library.reset(handle) }
    return try text.withUTF8 { utf8 in
      try utf8.withMemoryRebound(to: CChar.self) { characters in
        let status = library.bindText(handle, 1, characters.baseAddress, Int32(characters.count), nil)
        guard status == SQLiteLibrary.ok else { throw connection.error("bind", status) }
        guard let blob else { return try body() }
        return try blob.withUnsafeBytes { bytes in
          let status = library.bindBlob(handle, 2, bytes.baseAddress, Int32(bytes.count), nil)
          guard status == SQLiteLibrary.ok else { throw connection.error("bind", status) }
          return try body()
        }
      }
    }
  }

  /// Column `index` of the current row as a copy.
  func blob(_ index: Int32) -> Data {
    let count = Int(library.columnBytes(handle, index))
    guard count > 0, let bytes = library.columnBlob(handle, index) else { return Data() }
    return Data(bytes: bytes, count: count)
  }

  func finalize() {
    _ = library.finalize(handle)
  }
}

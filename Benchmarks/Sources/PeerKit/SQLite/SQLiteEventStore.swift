import Foundation

/// Events as a SQL user indexes them: the queried fields in columns with SQL indexes on the
/// same fields as CipherCask's (`city`, `date`, each attendee through a join table, a unique
/// `title`), the whole event as JSON beside them. In SQLCipher every page is encrypted, so
/// nothing is on disk in plaintext: the fair encrypted peer. (In plain SQLite the columns would
/// leak the indexed fields.)
final class SQLiteEventStore: EventStore {
  private let connection: SQLiteConnection
  private let encoder = ObjectJSON.encoder()
  private let decoder = ObjectJSON.decoder()
  private let insert: SQLiteStatement
  private let attend: SQLiteStatement
  private let deleteEvent: SQLiteStatement
  private let deleteAttendance: SQLiteStatement
  private let equality: SQLiteStatement
  private let range: SQLiteStatement
  private let attended: SQLiteStatement
  private let newest: SQLiteStatement
  private let counting: SQLiteStatement
  private let taken: SQLiteStatement
  private let begin: SQLiteStatement
  private let commit: SQLiteStatement

  static let schema = [
    "CREATE TABLE IF NOT EXISTS events (id TEXT PRIMARY KEY, city TEXT NOT NULL, date REAL NOT NULL,"
      + " title TEXT NOT NULL UNIQUE, body BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS events_city ON events (city)",
    "CREATE INDEX IF NOT EXISTS events_date ON events (date)",
    "CREATE TABLE IF NOT EXISTS attendance (person TEXT NOT NULL, event TEXT NOT NULL,"
      + " PRIMARY KEY (person, event)) WITHOUT ROWID",
  ]

  /// Whether the folder already held a filled database.
  let wasFilled: Bool

  /// With `cityDateIndex`, also an index on (city, date): the columns and indexes of a
  /// CipherCask collection with a composite index, for `cask-bench cold`'s disk comparison.
  init(setup: SQLiteSetup, directory: String, cityDateIndex: Bool = false) throws {
    connection = try setup.connect(
      file: directory + "/events.sqlite", durability: .never, table: "marker (filled INTEGER)")
    for statement in Self.schema { try connection.execute(statement) }
    if cityDateIndex { try connection.execute("CREATE INDEX IF NOT EXISTS events_city_date ON events (city, date)") }
    wasFilled = try connection.wasFilled()
    insert = try connection.prepare("INSERT INTO events (id, city, date, title, body) VALUES (?1, ?2, ?3, ?4, ?5)")
    attend = try connection.prepare("INSERT OR IGNORE INTO attendance (person, event) VALUES (?1, ?2)")
    deleteEvent = try connection.prepare("DELETE FROM events WHERE id = ?1")
    deleteAttendance = try connection.prepare("DELETE FROM attendance WHERE person = ?1 AND event = ?2")
    equality = try connection.prepare("SELECT body FROM events WHERE city = ?1 LIMIT ?2")
    range = try connection.prepare("SELECT body FROM events WHERE date >= ?1 AND date < ?2")
    attended = try connection.prepare(
      "SELECT body FROM events WHERE id IN (SELECT event FROM attendance WHERE person = ?1)")
    newest = try connection.prepare(
      "SELECT body FROM events WHERE city = ?1 ORDER BY date DESC, id DESC LIMIT ?2 OFFSET ?3")
    counting = try connection.prepare("SELECT count(*) FROM events WHERE city = ?1")
    taken = try connection.prepare("SELECT 1 FROM events WHERE title = ?1 LIMIT 1")
    begin = try connection.prepare("BEGIN")
    commit = try connection.prepare("COMMIT")
  }

  private func transaction(_ body: () throws -> Void) throws {
    try begin.run([])
    try body()
    try commit.run([])
  }

  private func insertRows(_ event: BenchEvent) throws {
    try insert.run([
      .text(event.id), .text(event.city), .double(event.date.timeIntervalSinceReferenceDate), .text(event.title),
      .blob(encoder.encode(event)),
    ])
    for person in event.attendees { try attend.run([.text(person), .text(event.id)]) }
  }

  func fill(_ events: [BenchEvent]) throws {
    try connection.fill(events, insert: insertRows)
  }

  private func events(_ statement: SQLiteStatement, _ values: [SQLiteValue]) throws -> [BenchEvent] {
    var events: [BenchEvent] = []
    try statement.run(values) { events.append(try decoder.decode(BenchEvent.self, from: statement.blob(0))) }
    return events
  }

  func equality(city: String, limit: Int) throws -> [BenchEvent] {
    try events(equality, [.text(city), .integer(limit)])
  }

  func dateRange(_ dates: Range<Date>) throws -> [BenchEvent] {
    try events(
      range,
      [
        .double(dates.lowerBound.timeIntervalSinceReferenceDate),
        .double(dates.upperBound.timeIntervalSinceReferenceDate),
      ])
  }

  func attended(by person: String) throws -> [BenchEvent] {
    try events(attended, [.text(person)])
  }

  func newest(city: String, offset: Int, limit: Int) throws -> [BenchEvent] {
    try events(newest, [.text(city), .integer(limit), .integer(offset)])
  }

  func count(city: String) throws -> Int {
    var count: Int64 = 0
    try counting.run([.text(city)]) { count = counting.int64(0) }
    return Int(count)
  }

  func isTaken(title: String) throws -> Bool {
    var found = false
    try taken.run([.text(title)]) { found = true }
    return found
  }

  func save(_ event: BenchEvent) throws {
    try transaction { try insertRows(event) }
  }

  func remove(_ event: BenchEvent) throws {
    try transaction {
      for person in event.attendees { try deleteAttendance.run([.text(person), .text(event.id)]) }
      try deleteEvent.run([.text(event.id)])
    }
  }

  func close() throws {
    connection.close()
  }
}

/// Opens the indexed SQL event peer.
public struct SQLiteEventOpener: EventStoreOpener {
  let sqlite: SQLiteSetup
  let cityDateIndex: Bool

  /// With `cityDateIndex`, the engine is named `<setup>+citydate` and has an index on
  /// (city, date) too.
  public init(_ setup: SQLiteSetup, cityDateIndex: Bool = false) {
    sqlite = setup
    self.cityDateIndex = cityDateIndex
  }

  public var name: String { sqlite.name + (cityDateIndex ? "+citydate" : "") }
  public var setup: String {
    sqlite.description + "; events (id TEXT PRIMARY KEY, city, date REAL, title UNIQUE, body = JSON), indexes on"
      + " city\(cityDateIndex ? ", date and (city, date)" : " and date"), attendance (person, event) WITHOUT ROWID;"
      + " WAL, synchronous OFF; one save per transaction"
  }

  public func open(directory: String) throws -> (store: any EventStore, filled: Bool) {
    let store = try SQLiteEventStore(setup: sqlite, directory: directory, cityDateIndex: cityDateIndex)
    return (store, store.wasFilled)
  }
}

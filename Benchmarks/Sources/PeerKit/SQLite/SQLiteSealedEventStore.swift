import Foundation

/// Events as one would store them by hand in plain SQLite without leaking a field: one row
/// per event, only the id in the clear, the JSON body an RNCryptor message (keys derived
/// once). No field can be indexed, so every query reads, decrypts and decodes rows until it
/// has its answer; a save writes one row and checks nothing.
final class SQLiteSealedEventStore: EventStore {
  private let connection: SQLiteConnection
  private let cipher: ValueCipher
  private let encoder = ObjectJSON.encoder()
  private let decoder = ObjectJSON.decoder()
  private let insert: SQLiteStatement
  private let delete: SQLiteStatement
  private let scan: SQLiteStatement
  let wasFilled: Bool

  init(setup: SQLiteSetup, directory: String) throws {
    let saltsExisted = FileManager.default.fileExists(atPath: directory + "/" + ValueCipher.saltsFile)
    cipher = try ValueCipher.derivedOnce(saltsIn: directory)
    connection = try setup.connect(
      file: directory + "/events.sqlite", durability: .never, table: "events (id TEXT PRIMARY KEY, body BLOB)")
    // Made with the salts of the folder's first run: rows sealed under other keys are not reused.
    let filled = try connection.wasFilled()
    wasFilled = saltsExisted && filled
    insert = try connection.prepare("INSERT INTO events (id, body) VALUES (?1, ?2)")
    delete = try connection.prepare("DELETE FROM events WHERE id = ?1")
    scan = try connection.prepare("SELECT body FROM events")
  }

  func fill(_ events: [BenchEvent]) throws {
    try connection.fill(events, insert: insertRow)
  }

  private func insertRow(_ event: BenchEvent) throws {
    try insert.run([.text(event.id), .blob(cipher.seal(encoder.encode(event)))])
  }

  /// Decrypts and decodes every row in turn; `body` returns `false` to stop early.
  private func walk(_ body: (BenchEvent) throws -> Bool) throws {
    defer { _ = scan.library.reset(scan.handle) }
    while try scan.step() {
      let event = try decoder.decode(BenchEvent.self, from: cipher.open(scan.blob(0)))
      guard try body(event) else { return }
    }
  }

  private func matching(_ isIncluded: (BenchEvent) -> Bool) throws -> [BenchEvent] {
    var found: [BenchEvent] = []
    try walk { event in
      if isIncluded(event) { found.append(event) }
      return true
    }
    return found
  }

  func equality(city: String, limit: Int) throws -> [BenchEvent] {
    var found: [BenchEvent] = []
    try walk { event in
      if event.city == city { found.append(event) }
      return found.count < limit
    }
    return found
  }

  func dateRange(_ dates: Range<Date>) throws -> [BenchEvent] {
    try matching { dates.contains($0.date) }
  }

  func attended(by person: String) throws -> [BenchEvent] {
    try matching { $0.attendees.contains(person) }
  }

  func newest(city: String, offset: Int, limit: Int) throws -> [BenchEvent] {
    let sorted = try matching { $0.city == city }.sorted { ($0.date, $0.id) > ($1.date, $1.id) }
    return Array(sorted.dropFirst(offset).prefix(limit))
  }

  func count(city: String) throws -> Int {
    var count = 0
    try walk { event in
      if event.city == city { count += 1 }
      return true
    }
    return count
  }

  func isTaken(title: String) throws -> Bool {
    var found = false
    try walk { event in
      found = event.title == title
      return !found
    }
    return found
  }

  func save(_ event: BenchEvent) throws {
    try insertRow(event)
  }

  func remove(_ event: BenchEvent) throws {
    try delete.run([.text(event.id)])
  }

  func close() throws {
    connection.close()
  }
}

/// Opens the sealed-rows SQL event peer.
public struct SQLiteSealedEventOpener: EventStoreOpener {
  let sqlite: SQLiteSetup

  public init(_ setup: SQLiteSetup) {
    sqlite = setup
  }

  public var name: String { sqlite.name + "+rncryptor" }
  public var setup: String {
    sqlite.description + "; events (id TEXT PRIMARY KEY, body = RNCryptor(JSON)), keys derived once; every query"
      + " decrypts and decodes rows (stopping at the answer when it can); WAL, synchronous OFF"
  }

  public func open(directory: String) throws -> (store: any EventStore, filled: Bool) {
    let store = try SQLiteSealedEventStore(setup: sqlite, directory: directory)
    return (store, store.wasFilled)
  }
}

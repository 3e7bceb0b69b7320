import Foundation

/// `BenchObject`s as an app built on RNCryptor keeps them in SQLite: one row per object, `id` in the clear,
/// the JSON body encrypted with RNCryptor (keys derived once, or PBKDF2 per object).
/// `all` and `filter` read and decrypt every row: the fields are inside the ciphertext. Without
/// a cipher, the JSON body as it is: SQLCipher's rows, whose pages the database encrypts.
final class SQLiteObjectStore: ObjectStore {
  private let connection: SQLiteConnection
  private let cipher: ValueCipher?
  private let insert: SQLiteStatement
  private let select: SQLiteStatement
  private let encoder = ObjectJSON.encoder()
  private let decoder = ObjectJSON.decoder()

  init(setup: SQLiteSetup, directory: String, durability: Durability, cipher: ValueCipher?) throws {
    self.cipher = cipher
    connection = try setup.connect(
      file: directory + "/objects.sqlite", durability: durability, table: "objects (id TEXT PRIMARY KEY, body BLOB)")
    insert = try connection.prepare("INSERT OR REPLACE INTO objects (id, body) VALUES (?1, ?2)")
    select = try connection.prepare("SELECT body FROM objects WHERE id = ?1")
  }

  func save(_ object: BenchObject) throws {
    let json = try encoder.encode(object)
    let body = try cipher?.seal(json) ?? json
    _ = try insert.with(text: object.id, blob: body) { try insert.step() }
  }

  func save(contentsOf objects: ArraySlice<BenchObject>) throws {
    try connection.execute("BEGIN")
    do {
      for object in objects { try save(object) }
      try connection.execute("COMMIT")
    } catch {
      try? connection.execute("ROLLBACK")
      throw error
    }
  }

  func get(id: String) throws -> BenchObject? {
    guard let body = try select.with(text: id, { try select.step() ? select.blob(0) : nil }) else { return nil }
    return try decoder.decode(BenchObject.self, from: cipher?.open(body) ?? body)
  }

  func all() throws -> [BenchObject] {
    try filter { _ in true }
  }

  func filter(_ isIncluded: (BenchObject) throws -> Bool) throws -> [BenchObject] {
    let scan = try connection.prepare("SELECT body FROM objects", kept: false)
    defer { scan.finalize() }
    var objects: [BenchObject] = []
    while try scan.step() {
      let body = scan.blob(0)
      let object = try decoder.decode(BenchObject.self, from: cipher?.open(body) ?? body)
      if try isIncluded(object) { objects.append(object) }
    }
    return objects
  }

  func close() throws {
    connection.close()
  }
}

/// Opens the SQL object peer.
public struct SQLiteObjectOpener: ObjectStoreOpener {
  let sqlite: SQLiteSetup
  let perObjectPBKDF2: Bool
  /// Whether each body is an RNCryptor message (no: the plain JSON, for SQLCipher).
  let sealsRows: Bool

  public init(_ setup: SQLiteSetup, perObjectPBKDF2: Bool, sealsRows: Bool = true) {
    sqlite = setup
    self.perObjectPBKDF2 = perObjectPBKDF2
    self.sealsRows = sealsRows
  }

  public var name: String { sqlite.name + (sealsRows ? (perObjectPBKDF2 ? "+pbkdf2" : "+rncryptor") : "") }
  public var setup: String {
    guard sealsRows else {
      return sqlite.description
        + "; table objects (id TEXT PRIMARY KEY, body BLOB), body = JSON; one save per transaction"
    }
    return sqlite.description + "; table objects (id TEXT PRIMARY KEY, body BLOB), body = RNCryptor(JSON), "
      + (perObjectPBKDF2
        ? "a password message with its own PBKDF2 per object" : "keys derived once")
      + "; one save per transaction"
  }

  public func open(directory: String, durability: Durability) throws -> any ObjectStore {
    guard sealsRows else {
      return try SQLiteObjectStore(setup: sqlite, directory: directory, durability: durability, cipher: nil)
    }
    let cipher = perObjectPBKDF2 ? ValueCipher.pbkdf2PerValue(ValueCipher.password) : try ValueCipher.derivedOnce()
    return try SQLiteObjectStore(setup: sqlite, directory: directory, durability: durability, cipher: cipher)
  }
}

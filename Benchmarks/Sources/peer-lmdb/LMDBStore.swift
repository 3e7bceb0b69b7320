import CLMDB
import Foundation
import PeerKit
import Synchronization

/// LMDB: one environment, the unnamed database, a 64 GiB map (address space only).
///
/// Writes take a write transaction each (`write` one for the whole batch); LMDB serializes
/// writers itself. Reads use a read-only transaction that is reset and renewed between gets
/// (LMDB's recommended pattern for repeated reads); `MDB_NOTLS` ties it to the handle rather
/// than the thread.
final class LMDBStore: KeyValueStore, @unchecked Sendable {
  private let environment: OpaquePointer
  private let database: MDB_dbi
  private let reader: Mutex<LMDBReader?>

  static let mapSize = 64 << 30

  init(directory: String, durability: Durability) throws {
    var environment: OpaquePointer?
    try LMDBStore.check(mdb_env_create(&environment), "env_create")
    guard let environment else { throw PeerError("lmdb: no environment") }
    self.environment = environment
    try LMDBStore.check(mdb_env_set_mapsize(environment, LMDBStore.mapSize), "set_mapsize")
    var flags = UInt32(MDB_NOTLS)
    if durability == .never { flags |= UInt32(MDB_NOSYNC) }
    try LMDBStore.check(mdb_env_open(environment, directory, flags, 0o644), "env_open")
    var transaction: OpaquePointer?
    try LMDBStore.check(mdb_txn_begin(environment, nil, 0, &transaction), "txn_begin")
    var database = MDB_dbi()
    try LMDBStore.check(mdb_dbi_open(transaction, nil, 0, &database), "dbi_open")
    try LMDBStore.check(mdb_txn_commit(transaction), "txn_commit")
    self.database = database
    reader = Mutex(try LMDBReader(environment: environment, database: database))
  }

  static func check(_ status: Int32, _ what: String) throws {
    guard status == 0 else { throw PeerError("lmdb: \(what) failed: \(String(cString: mdb_strerror(status)))") }
  }

  /// Runs `body` in a write transaction and commits it.
  private func update(_ body: (OpaquePointer?) throws -> Void) throws {
    var transaction: OpaquePointer?
    try LMDBStore.check(mdb_txn_begin(environment, nil, 0, &transaction), "txn_begin")
    do {
      try body(transaction)
    } catch {
      mdb_txn_abort(transaction)
      throw error
    }
    try LMDBStore.check(mdb_txn_commit(transaction), "txn_commit")
  }

  private func put(_ value: Data, forKey key: String, in transaction: OpaquePointer?) throws {
    try LMDBKey.with(key) { keyValue in
      try value.withUnsafeBytes { bytes in
        var data = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
        try LMDBStore.check(mdb_put(transaction, database, &keyValue, &data, 0), "put")
      }
    }
  }

  func put(_ value: Data, forKey key: String) throws {
    try update { try put(value, forKey: key, in: $0) }
  }

  func write(_ pairs: [(key: String, value: Data)]) throws {
    try update { transaction in
      for pair in pairs { try put(pair.value, forKey: pair.key, in: transaction) }
    }
  }

  func delete(_ key: String) throws {
    try update { transaction in
      try LMDBKey.with(key) { keyValue in
        let status = mdb_del(transaction, database, &keyValue, nil)
        if status != MDB_NOTFOUND { try LMDBStore.check(status, "del") }
      }
    }
  }

  func get(_ key: String) throws -> Data? {
    try reader.withLock { reader in
      guard let reader else { throw PeerError("lmdb: closed") }
      return try reader.get(key)
    }
  }

  func makeReader() throws -> any KeyValueReader {
    try LMDBReader(environment: environment, database: database)
  }

  func compact() throws -> Bool { false }

  func sync() throws {
    try LMDBStore.check(mdb_env_sync(environment, 1), "env_sync")
  }

  func close() throws {
    reader.withLock { $0 = nil }
    mdb_env_close(environment)
  }
}

/// A read-only transaction renewed for each get and reset after it.
final class LMDBReader: KeyValueReader {
  private let transaction: OpaquePointer
  private let database: MDB_dbi

  init(environment: OpaquePointer, database: MDB_dbi) throws {
    var transaction: OpaquePointer?
    try LMDBStore.check(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &transaction), "txn_begin")
    guard let transaction else { throw PeerError("lmdb: no read transaction") }
    mdb_txn_reset(transaction)
    self.transaction = transaction
    self.database = database
  }

  func get(_ key: String) throws -> Data? {
    try LMDBStore.check(mdb_txn_renew(transaction), "txn_renew")
    defer { mdb_txn_reset(transaction) }
    return try LMDBKey.with(key) { keyValue in
      var data = MDB_val()
      let status = mdb_get(transaction, database, &keyValue, &data)
      if status == MDB_NOTFOUND { return nil }
      try LMDBStore.check(status, "get")
      guard let bytes = data.mv_data else { return Data() }
      return Data(bytes: bytes, count: data.mv_size)
    }
  }

  deinit {
    mdb_txn_abort(transaction)
  }
}

enum LMDBKey {
  /// Runs `body` with an `MDB_val` over `key`'s UTF-8 bytes.
  static func with<Result>(_ key: String, _ body: (inout MDB_val) throws -> Result) throws -> Result {
    var key = key
    return try key.withUTF8 { utf8 in
      var value = MDB_val(mv_size: utf8.count, mv_data: UnsafeMutableRawPointer(mutating: utf8.baseAddress))
      return try body(&value)
    }
  }
}

struct LMDBOpener: StoreOpener {
  var name: String { "lmdb" }
  var setup: String {
    "\(String(cString: mdb_version(nil, nil, nil))), MDB_NOTLS, MDB_NOSYNC when not durable, 64 GiB map;"
      + " fills in write transactions of 1000 puts, other writes one per transaction"
  }
  var compaction: String { "none (LMDB reuses freed pages but never shrinks its file)" }

  func open(directory: String, durability: Durability) throws -> any KeyValueStore {
    try LMDBStore(directory: directory, durability: durability)
  }
}

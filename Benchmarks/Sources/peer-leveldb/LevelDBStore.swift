import CLevelDB
import Foundation
import PeerKit

/// LevelDB through its C API: default options (4 MiB write buffer, 8 MiB block cache, Snappy)
/// plus a 10-bit-per-key Bloom filter, which LevelDB recommends for point reads and which turns
/// most `readmissing` lookups into no disk access at all. The handle is thread-safe; concurrent
/// synced writers share one log sync (LevelDB's own group commit).
final class LevelDBStore: KeyValueStore, @unchecked Sendable {
  private let database: OpaquePointer
  private let options: OpaquePointer
  private let filter: OpaquePointer
  private let readOptions: OpaquePointer
  private let writeOptions: OpaquePointer

  init(directory: String, durability: Durability) throws {
    guard let options = leveldb_options_create(), let filter = leveldb_filterpolicy_create_bloom(10),
      let readOptions = leveldb_readoptions_create(), let writeOptions = leveldb_writeoptions_create()
    else { throw PeerError("leveldb: cannot create options") }
    leveldb_options_set_create_if_missing(options, 1)
    leveldb_options_set_filter_policy(options, filter)
    leveldb_writeoptions_set_sync(writeOptions, durability == .always ? 1 : 0)
    var error: UnsafeMutablePointer<CChar>?
    let database = leveldb_open(options, directory, &error)
    try LevelDBStore.check(error, "open")
    guard let database else { throw PeerError("leveldb: open returned no database") }
    self.database = database
    self.options = options
    self.filter = filter
    self.readOptions = readOptions
    self.writeOptions = writeOptions
  }

  static func check(_ error: UnsafeMutablePointer<CChar>?, _ what: String) throws {
    guard let error else { return }
    let message = String(cString: error)
    leveldb_free(error)
    throw PeerError("leveldb: \(what) failed: \(message)")
  }

  /// Runs `body` with `key`'s UTF-8 bytes as the C API takes them.
  private func key<Result>(_ key: String, _ body: (UnsafePointer<CChar>?, Int) -> Result) -> Result {
    var key = key
    return key.withUTF8 { utf8 in utf8.withMemoryRebound(to: CChar.self) { body($0.baseAddress, $0.count) } }
  }

  /// Runs `body` with `key`'s and `value`'s bytes as the C API takes them.
  private func pair(
    _ key: String, _ value: Data, _ body: (UnsafePointer<CChar>?, Int, UnsafePointer<CChar>?, Int) -> Void
  ) {
    self.key(key) { key, count in
      value.withUnsafeBytes { body(key, count, $0.baseAddress?.assumingMemoryBound(to: CChar.self), $0.count) }
    }
  }

  func put(_ value: Data, forKey key: String) throws {
    var error: UnsafeMutablePointer<CChar>?
    pair(key, value) { leveldb_put(database, writeOptions, $0, $1, $2, $3, &error) }
    try LevelDBStore.check(error, "put")
  }

  func write(_ pairs: [(key: String, value: Data)]) throws {
    guard let batch = leveldb_writebatch_create() else { throw PeerError("leveldb: no write batch") }
    defer { leveldb_writebatch_destroy(batch) }
    for item in pairs { pair(item.key, item.value) { leveldb_writebatch_put(batch, $0, $1, $2, $3) } }
    var error: UnsafeMutablePointer<CChar>?
    leveldb_write(database, writeOptions, batch, &error)
    try LevelDBStore.check(error, "write")
  }

  func delete(_ key: String) throws {
    var error: UnsafeMutablePointer<CChar>?
    self.key(key) { leveldb_delete(database, writeOptions, $0, $1, &error) }
    try LevelDBStore.check(error, "delete")
  }

  func get(_ key: String) throws -> Data? {
    var error: UnsafeMutablePointer<CChar>?
    var length = 0
    let found = self.key(key) { leveldb_get(database, readOptions, $0, $1, &length, &error) }
    try LevelDBStore.check(error, "get")
    guard let found else { return nil }
    defer { leveldb_free(found) }
    return Data(bytes: found, count: length)
  }

  func makeReader() throws -> any KeyValueReader { self }

  /// `CompactRange(nil, nil)`: every level compacted into the last, dropping overwritten and
  /// deleted entries.
  func compact() throws -> Bool {
    leveldb_compact_range(database, nil, 0, nil, 0)
    return true
  }

  func sync() throws {}

  func close() throws {
    leveldb_close(database)
    leveldb_options_destroy(options)
    leveldb_filterpolicy_destroy(filter)
    leveldb_readoptions_destroy(readOptions)
    leveldb_writeoptions_destroy(writeOptions)
  }
}

struct LevelDBOpener: StoreOpener {
  var name: String { "leveldb" }
  var setup: String {
    "LevelDB \(leveldb_major_version()).\(leveldb_minor_version()), default options + 10-bit Bloom filter,"
      + " WriteOptions.sync true when durable; fills in write batches of 1000 puts, other writes one per write"
  }
  var compaction: String { "CompactRange over all keys" }

  func open(directory: String, durability: Durability) throws -> any KeyValueStore {
    try LevelDBStore(directory: directory, durability: durability)
  }
}

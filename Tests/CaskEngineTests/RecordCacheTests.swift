import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CaskEngine

/// Counts the positioned reads of segment files.
final class ReadCountingFileSystem: ForwardingFileSystem, @unchecked Sendable {
  let segmentReads = Atomic(0)

  final class File: ForwardingStorageFile, @unchecked Sendable {
    let owner: ReadCountingFileSystem
    init(_ base: any StorageFile, owner: ReadCountingFileSystem) {
      self.owner = owner
      super.init(base)
    }
    override func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
      if path.contains(".seg") { owner.segmentReads.add(1, ordering: .relaxed) }
      return try super.read(into: buffer, at: offset)
    }
  }

  override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    File(try super.open(path, mode: mode), owner: self)
  }
}

/// The record cache (`Options.recordCacheBytes`): hot gets make no read, the cache stays
/// within its size, holds records sealed as on disk, and never serves what the index no
/// longer points at.
@Suite("The record cache")
struct RecordCacheTests {
  @Test("a second get of a key reads nothing from disk; with the cache off it reads again")
  func hotGetMakesNoRead() throws {
    for cacheBytes in [1 << 20, 0] {
      let files = ReadCountingFileSystem()
      var options = CaskStore.Options(durability: .never, fileSystem: files)
      options.recordCacheBytes = cacheBytes
      try withStore(options: options, label: "record-cache-hot") { store, _ in
        try store.put(Data("one".utf8), forKey: "a")
        #expect(try store.get("a") == Data("one".utf8))
        let before = files.segmentReads.load(ordering: .relaxed)
        for _ in 0..<5 { #expect(try store.get("a") == Data("one".utf8)) }
        let reads = files.segmentReads.load(ordering: .relaxed) - before
        #expect(reads == (cacheBytes > 0 ? 0 : 5), "cache \(cacheBytes): \(reads) reads")
      }
    }
  }

  @Test("an overwritten or deleted key is never served from the cache")
  func overwriteAndDeleteAreSeen() throws {
    try withStore(label: "record-cache-overwrite") { store, _ in
      try store.put(Data("old".utf8), forKey: "k")
      #expect(try store.get("k") == Data("old".utf8))
      try store.put(Data("new".utf8), forKey: "k")
      #expect(try store.get("k") == Data("new".utf8))
      try store.delete("k")
      #expect(try store.get("k") == nil)
      try store.put(Data("again".utf8), forKey: "k")
      #expect(try store.get("k") == Data("again".utf8))
    }
  }

  @Test("values read back right after compaction moved every record, from a warm cache")
  func compactionMovesRecords() throws {
    let options = CaskStore.Options(durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)
    try withStore(options: options, label: "record-cache-compaction") { store, _ in
      for index in 0..<200 { try store.put(Data("v\(index)".utf8), forKey: "k\(index % 50)") }
      for index in 0..<50 { _ = try store.get("k\(index)") }
      _ = try store.compact()
      for index in 0..<50 { #expect(try store.get("k\(index)") == Data("v\(150 + index)".utf8)) }
    }
  }

  @Test("the cache keeps to its size under a stream of misses, and keeps a hot key")
  func boundedAndKeepsHotKeys() throws {
    let cache = RecordCache(capacity: 64 << 10)
    let record = [UInt8](repeating: 7, count: 1000)
    let hot = RecordLocation(segment: 1, offset: 0, length: 1000)
    record.withUnsafeBytes { cache.insert($0, at: hot) }
    var random = SeededRandom.make(test: "RecordCacheTests.boundedAndKeepsHotKeys")
    for round in 1...5_000 {
      let location = RecordLocation(segment: 2, offset: UInt32(random.next() % 1_000_000), length: 1000)
      record.withUnsafeBytes { cache.insert($0, at: location) }
      #expect(cache.bytes <= 64 << 10)
      if round % 10 == 0 { #expect(cache.withRecord(at: hot) { $0.count } == 1000, "round \(round)") }
    }
    // A record over a quarter of the cache is not kept.
    let large = [UInt8](repeating: 1, count: 20 << 10)
    large.withUnsafeBytes { cache.insert($0, at: RecordLocation(segment: 3, offset: 0, length: 20 << 10)) }
    #expect(cache.withRecord(at: RecordLocation(segment: 3, offset: 0, length: 20 << 10)) { $0.count } == nil)
    cache.removeAll()
    #expect(cache.bytes == 0)
  }

  @Test("the cache's location table agrees with a dictionary through inserts, moves and removals")
  func locationTableMatchesDictionary() {
    var table = RecordCacheTable()
    var model: [UInt64: Int] = [:]
    var random = SeededRandom.make(test: "RecordCacheTests.locationTableMatchesDictionary")
    // Few distinct keys, so that probe runs form and removals inside them happen often.
    for step in 0..<20_000 {
      let key = UInt64(random.next() % 300) << 32 | UInt64(random.next() % 4)
      if random.next() % 3 == 0 {
        table.remove(key)
        model[key] = nil
      } else {
        table.set(step, for: key)
        model[key] = step
      }
      #expect(table.count == model.count)
    }
    for segment in 0..<300 {
      for offset in 0..<4 {
        let key = UInt64(segment) << 32 | UInt64(offset)
        #expect(table[key] == model[key], "key \(segment):\(offset)")
      }
    }
  }

  @Test("a full cache keeps one miss in four, and a key that keeps missing gets in")
  func fullCacheAdmitsSomeMisses() {
    let cache = RecordCache(capacity: 16 << 10)
    let record = RecordBytes.zeroed(count: 1000)
    var offset: UInt32 = 0
    func location(_ offset: UInt32) -> RecordLocation { RecordLocation(segment: 1, offset: offset, length: 1000) }
    // Fill it up: every record is kept while there is room.
    while cache.bytes + 1000 + RecordCache.entryOverhead <= 16 << 10 {
      cache.insert(record, at: location(offset))
      #expect(cache.withRecord(at: location(offset)) { $0.count } == 1000)
      offset += 1000
    }
    let newcomer = location(1 << 30)
    var tries = 0
    while cache.withRecord(at: newcomer, { $0.count }) == nil {
      cache.insert(record, at: newcomer)
      tries += 1
    }
    #expect(tries == RecordCache.admissionInterval)
    #expect(cache.bytes <= 16 << 10)
  }

  @Test("a cached record is the sealed record as on disk: no value in plaintext")
  func cachedRecordsAreSealed() throws {
    var options = testStoreOptions
    options.recordCacheBytes = 1 << 20
    try withStore(options: options, label: "record-cache-sealed") { store, path in
      let value = Data("a plaintext value that must stay sealed".utf8)
      try store.put(value, forKey: "secret")
      _ = try store.get("secret")
      let cache = try #require(store.recordCache)
      let segment = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(Segment.fileName(id: 1))"))
      #expect(cache.bytes > 0)
      let held = store.state.withLock { state in state.directory[IndexKey("secret")] }
      let location = try #require(held)
      let bytes = try #require(cache.withRecord(at: location) { Data($0) })
      #expect(bytes.range(of: value) == nil)
      #expect(segment.range(of: bytes) != nil, "the cached bytes are the record on disk")
    }
  }
}

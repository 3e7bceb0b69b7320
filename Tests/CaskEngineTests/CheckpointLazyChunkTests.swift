import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CaskEngine

/// A store opened from a checkpoint reads a chunk of long keys the first time a key in it is
/// needed, not at open: open reads no page of a store of long keys, an operation loads the
/// chunks of the keys it compares or hands out and no other, and a chunk that fails is
/// reported when first touched (a typed error naming the checkpoint and the page's offset,
/// never a wrong or missing answer) and retires the checkpoint.
@Suite("Checkpoint: chunks of long keys loaded when first needed")
struct CheckpointLazyChunkTests {
  private static func open(_ path: String, checkpoints: Bool = true) throws -> CaskStore {
    var options = CheckpointFixture.options(segmentSize: 256 << 10)
    if !checkpoints { options.checkpoints = nil }
    return try CaskStore(path: path, keys: CheckpointFixture.keys, options: options)
  }

  /// Keys of 40 to 60 bytes in two groups and outside any, as typed collections make them.
  private static func key(_ number: Int) -> String {
    let padding = String(repeating: "x", count: number % 21)
    switch number % 3 {
    case 0: return "orders\u{0}order-id-\(100_000 + number)-0000000000000000" + padding
    case 1: return "customers\u{0}customer-\(100_000 + number)-00000000000000" + padding
    default: return "a-key-outside-any-group-\(100_000 + number)-0000000000" + padding
    }
  }

  /// A closed store of `count` long keys with a checkpoint, and what it holds.
  private static func filled(_ path: String, count: Int = 6_000) throws -> [String: Data] {
    let store = try open(path)
    var model: [String: Data] = [:]
    for number in 0..<count {
      let key = key(number)
      model[key] = Data("value-\(number)".utf8)
      try store.put(model[key]!, forKey: key)
    }
    try store.close()
    return model
  }

  private static func tables(_ store: CaskStore) -> [String: KeyTable] {
    store.state.withLock { state in
      var tables = ["": state.directory.ungrouped]
      for (name, table) in zip(state.directory.groups.names, state.directory.groups.tables) {
        tables[name.string] = table
      }
      return tables
    }
  }

  /// Chunks loaded so far, in all tables or in one.
  private static func loadedChunks(_ store: CaskStore, in group: String? = nil) -> Int {
    tables(store).filter { group == nil || $0.key == group }.values.reduce(0) {
      $0 + ($1.arena.storage.lazy?.loadedChunks.count ?? 0)
    }
  }

  private static func reservedChunks(_ store: CaskStore, in group: String? = nil) -> Int {
    tables(store).filter { group == nil || $0.key == group }.values.reduce(0) {
      $0 + ($1.arena.storage.lazy?.chunkCount ?? 0)
    }
  }

  private static func pages(_ store: CaskStore) throws -> CheckpointPages {
    try #require(store.state.withLock { $0.directory.pages })
  }

  @Test("open of a store of long keys reads no page of its checkpoint")
  func openReadsNoPage() throws {
    try withTemporaryDirectory("checkpoint-chunks-open") { directory in
      let path = directory.file("store")
      let model = try Self.filled(path)
      let store = try Self.open(path)
      #expect(store.stats().recovery.checkpointIgnored == nil)
      #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
      #expect(Self.reservedChunks(store) >= 6, "too few chunks for the test to mean anything")
      #expect(Self.loadedChunks(store) == 0)
      #expect(try Self.pages(store).reads.load(ordering: .relaxed) == 0)
      #expect(try CheckpointFixture.contents(of: store) == model)
      try store.close()
    }
  }

  @Test("a get, a put, a delete and a group's listing load only the chunks of the keys they need")
  func operationsLoadOnlyTheirChunks() throws {
    try withTemporaryDirectory("checkpoint-chunks-operations") { directory in
      let path = directory.file("store")
      var model = try Self.filled(path)
      let store = try Self.open(path, checkpoints: false)
      #expect(Self.loadedChunks(store) == 0)

      // A get compares its key with the one slot that holds it: one chunk.
      let wanted = Self.key(4_000)
      #expect(try store.get(wanted) == model[wanted])
      #expect(Self.loadedChunks(store) == 1)
      #expect(Self.loadedChunks(store, in: "customers") == 1)
      // A key that is not there, and one held in its slot, load nothing more.
      #expect(try store.get("customers\u{0}customer-absent-0000000000000000000000") == nil)
      #expect(try store.get(Self.key(4_000) + "-not-there") == nil)
      try store.put(Data("short".utf8), forKey: "short")
      #expect(try store.get("short") == Data("short".utf8))
      #expect(Self.loadedChunks(store) == 1)

      // A delete loads its key's chunk; a put of a new key the table's last chunk, where the
      // key goes.
      let deleted = Self.key(3)
      try store.delete(deleted)
      model[deleted] = nil
      #expect(Self.loadedChunks(store, in: "orders") == 1)
      let added = Self.key(6_003)
      try store.put(Data("added".utf8), forKey: added)
      model[added] = Data("added".utf8)
      #expect(Self.loadedChunks(store, in: "orders") <= 2)
      #expect(Self.loadedChunks(store, in: "") == 0)

      // Listing a group loads that group's chunks, and no other table's.
      let orders = model.keys.filter { $0.hasPrefix("orders\u{0}") }.sorted {
        $0.utf8.lexicographicallyPrecedes($1.utf8)
      }
      #expect(try store.keys(inGroup: "orders") == orders)
      #expect(Self.loadedChunks(store, in: "orders") == Self.reservedChunks(store, in: "orders"))
      #expect(Self.loadedChunks(store, in: "") == 0)
      #expect(Self.loadedChunks(store, in: "customers") == 1)
      model["short"] = Data("short".utf8)
      #expect(try CheckpointFixture.contents(of: store) == model)
      try store.close()
    }
  }

  @Test("a put of new long keys after open loads no chunk: they go into a new one, repacked by the next checkpoint")
  func newKeysLoadNoChunk() throws {
    try withTemporaryDirectory("checkpoint-chunks-new-keys") { directory in
      let path = directory.file("store")
      var model = try Self.filled(path)
      var store = try Self.open(path)
      let reserved = Self.reservedChunks(store, in: "orders")
      #expect(reserved >= 2, "too few chunks for the test to mean anything")
      for number in 6_000..<6_040 where number % 3 == 0 {
        let key = Self.key(number)
        model[key] = Data("added-\(number)".utf8)
        try store.put(model[key]!, forKey: key)
      }
      #expect(Self.loadedChunks(store, in: "orders") == 0)
      let grown = Self.tables(store)["orders"]?.arena.storage.chunks.count ?? 0
      #expect(grown == reserved + 1)
      #expect(try CheckpointFixture.contents(of: store) == model)
      try store.close()

      // The next open, from the checkpoint close wrote, has every key: that checkpoint packed
      // the table's long keys afresh (section 18), the new ones among them, so into no fewer
      // chunks than before.
      store = try Self.open(path)
      #expect(store.stats().recovery.checkpointIgnored == nil)
      #expect(Self.reservedChunks(store, in: "orders") >= reserved)
      #expect(try CheckpointFixture.contents(of: store) == model)
      #expect(try store.verify().isClean)
      try store.close()
    }
  }

  /// The chunks of each table that hold a long key whose record is in segment `id`.
  private static func chunks(holdingKeysIn id: UInt32, of store: CaskStore) -> [String: Set<Int>] {
    tables(store).mapValues { table in
      var chunks: Set<Int> = []
      for index in 0..<table.capacity {
        let slot = table.slot(index)
        guard KeyTable.tag(slot) == KeyTable.longTag, KeyTable.location(slot).segment == id else { continue }
        chunks.insert(Int(slot.load(fromByteOffset: CaskFormat.slotLongKeyPositionOffset, as: UInt64.self) >> 32))
      }
      return chunks
    }
  }

  @Test("a seal's hint after open loads the chunks of the sealed segment's keys only")
  func sealLoadsOnlyItsKeysChunks() throws {
    try withTemporaryDirectory("checkpoint-chunks-seal") { directory in
      let path = directory.file("store")
      var model = try Self.filled(path)
      let store = try Self.open(path, checkpoints: false)
      let sealed = try #require(store.writer.withLock { $0.active?.segment.id })
      let segments = store.stats().segments
      // New keys of a group of their own until the segment open resumed is sealed (its hint
      // walks every table's slots for the keys in it).
      var number = 0
      while store.stats().segments == segments {
        let key = "fresh\u{0}a-new-key-of-forty-bytes-or-so-\(100_000 + number)"
        model[key] = Data(repeating: 7, count: 200)
        try store.put(model[key]!, forKey: key)
        number += 1
      }
      let walked = Self.tables(store).values.allSatisfy { $0.isFullyLoaded }
      #expect(walked, "the seal's hint did not walk every table")
      let needed = Self.chunks(holdingKeysIn: sealed, of: store).filter { $0.key != "fresh" }
      let loaded = Self.tables(store).filter { $0.key != "fresh" }.mapValues {
        Set($0.arena.storage.lazy?.loadedChunks ?? [])
      }
      #expect(needed.values.contains { !$0.isEmpty }, "no long key in the sealed segment: the test did not test it")
      #expect(loaded == needed)
      #expect(Self.loadedChunks(store) < Self.reservedChunks(store))
      #expect(try CheckpointFixture.contents(of: store) == model)
      try store.close()
    }
  }

  /// Copies `path` with one byte of the ungrouped table's chunk `chunk` flipped; returns the
  /// copy's path and the page's offset in the file.
  private static func damagedCopy(of path: String, chunk: Int, in directory: TemporaryDirectory) throws
    -> (path: String, offset: UInt64)
  {
    let probe = try open(path)
    let lazy = try #require(tables(probe)[""]?.arena.storage.lazy)
    let page = lazy.page(of: chunk)
    let offset = try pages(probe).positions[page]
    try probe.close()
    let copy = directory.file("damaged")
    try CheckpointFixture.copy(path, to: copy)
    try FileDamage.flipByte(at: Int(offset) + 40, in: CheckpointFixture.file(copy))
    return (copy, offset)
  }

  @Test("a damaged chunk is reported when a key in it is first needed, not at open, and retires the checkpoint")
  func damagedChunkReportedOnFirstTouch() throws {
    try withTemporaryDirectory("checkpoint-chunks-damage") { directory in
      let source = directory.file("store")
      let model = try Self.filled(source)
      // The first chunk holds the first long keys written outside any group.
      let (path, offset) = try Self.damagedCopy(of: source, chunk: 0, in: directory)
      var store = try Self.open(path)
      #expect(store.stats().recovery.checkpointIgnored == nil)
      #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
      // Keys whose chunks are sound answer, and nothing is reported yet.
      for number in [5_999, 5_998, 5_997] { #expect(try store.get(Self.key(number)) == model[Self.key(number)]) }
      #expect(store.state.withLock { $0.directory.damage } == nil)

      #expect {
        _ = try store.get(Self.key(2))
      } throws: { error in
        guard case CaskError.corrupt(let file, let at, _) = error else { return false }
        return file.hasSuffix(CaskFormat.checkpointFileName) && at == offset
      }
      // From then on the index answers nothing, and nothing is written through it.
      #expect(throws: CaskError.self) { try store.get(Self.key(5_999)) }
      #expect(throws: CaskError.self) { try store.put(Data("x".utf8), forKey: "new") }
      #expect(throws: CaskError.self) { try store.keys() }
      #expect(!FileManager.default.fileExists(atPath: CheckpointFixture.file(path)))
      try store.close()

      store = try Self.open(path)
      #expect(store.stats().recovery.segmentsFromCheckpoint == 0)
      #expect(try CheckpointFixture.contents(of: store) == model)
      try store.close()
    }
  }

  @Test("a listing that meets a damaged chunk throws instead of listing fewer keys")
  func damagedChunkStopsListing() throws {
    try withTemporaryDirectory("checkpoint-chunks-listing") { directory in
      let source = directory.file("store")
      let model = try Self.filled(source)
      let chunks = try {
        let store = try Self.open(source)
        defer { try? store.close() }
        return Self.reservedChunks(store, in: "")
      }()
      let (path, offset) = try Self.damagedCopy(of: source, chunk: chunks - 1, in: directory)
      let store = try Self.open(path, checkpoints: false)
      #expect(try store.keys(inGroup: "orders").count == model.keys.filter { $0.hasPrefix("orders\u{0}") }.count)
      #expect {
        _ = try store.keys()
      } throws: { error in
        guard case CaskError.corrupt(_, let at, _) = error else { return false }
        return at == offset
      }
      try store.close()
    }
  }

  @Test("readers loading chunks on several threads while a writer adds long keys and checkpoints are written")
  func concurrentChunkLoads() throws {
    try withTemporaryDirectory("checkpoint-chunks-threads") { directory in
      let path = directory.file("store")
      let model = try Self.filled(path, count: 3_000)
      let options = CheckpointFixture.options(interval: 4 << 10, segmentSize: 256 << 10)
      var store = try CaskStore(path: path, keys: CheckpointFixture.keys, options: options)
      #expect(Self.loadedChunks(store) == 0)
      let reading = store
      let keys = Array(model.keys)
      let mismatches = Locked(0)
      DispatchQueue.concurrentPerform(iterations: 3) { worker in
        var random = SeededRandom(seed: UInt64(worker) + 11)
        for step in 0..<1_500 {
          if worker == 0 {
            // Mostly keys of a group of their own, so that the readers' tables stay shared
            // with the checkpoint writer's snapshot while it loads their chunks; now and then
            // a long key into a table the readers read, which copies its arena under that
            // table's chunk lock.
            let key =
              step % 50 == 0 ? Self.key(10_000 + step) : "fresh\u{0}a-long-key-written-beside-the-readers-\(step)"
            try? reading.put(Data("w\(step)".utf8), forKey: key)
          } else {
            // In the order the keys were written, so that the chunks are first needed one
            // after another while checkpoints are written; then at random.
            let key = step < 1_000 ? Self.key(2 * step + worker - 1) : keys[Int(random.next() % UInt64(keys.count))]
            if (try? reading.get(key)) != model[key] { mismatches.withLock { $0 += 1 } }
          }
        }
      }
      #expect(mismatches.withLock { $0 } == 0)
      #expect(store.backgroundWriteFailure == nil)
      try store.close()
      store = try Self.open(path)
      #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
      for (key, value) in model { #expect(try store.get(key) == value) }
      #expect(try store.get(Self.key(11_450)) == Data("w1450".utf8))
      #expect(try store.get("fresh\u{0}a-long-key-written-beside-the-readers-1499") == Data("w1499".utf8))
      try store.close()
    }
  }

  @Test("gets loading chunks while the directory they share with a checkpoint's snapshot is loaded whole")
  func getsBesideAWholeLoad() throws {
    try withTemporaryDirectory("checkpoint-chunks-snapshot") { directory in
      let path = directory.file("store")
      let model = try Self.filled(path, count: 3_000)
      let store = try Self.open(path, checkpoints: false)
      // What a checkpoint's writer holds: the directory, sharing every slot block and arena
      // with the store's until the store next changes them.
      let snapshot = store.state.withLock { $0.directory }
      let mismatches = Locked(0)
      let loaded = Locked(false)
      // Two threads of their own, started together: a concurrentPerform may run both parts
      // one after the other on one thread.
      let started = DispatchSemaphore(value: 0)
      let finished = DispatchGroup()
      finished.enter()
      Thread {
        started.wait()
        let whole = snapshot.loadAllPages()
        loaded.withLock { $0 = whole }
        finished.leave()
      }.start()
      finished.enter()
      Thread {
        started.wait()
        for number in 0..<3_000 {
          let key = Self.key(number)
          if (try? store.get(key)) != model[key] { mismatches.withLock { $0 += 1 } }
        }
        finished.leave()
      }.start()
      started.signal()
      started.signal()
      finished.wait()
      #expect(loaded.withLock { $0 })
      #expect(mismatches.withLock { $0 } == 0)
      #expect(Self.loadedChunks(store) == Self.reservedChunks(store))
      try store.close()
    }
  }
}

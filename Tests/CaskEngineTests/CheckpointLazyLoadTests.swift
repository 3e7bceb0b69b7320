import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A store opened from a checkpoint reads a page of the key directory the first time it is
/// touched: the page is checked then, never answered from unchecked, and a page that fails
/// stops the index (a typed error, never a wrong or missing answer) and retires the checkpoint
/// so that the next open rebuilds from the hints and the log.
@Suite("Checkpoint: pages of the key directory loaded when first touched")
struct CheckpointLazyLoadTests {
  /// Segments large enough that a few thousand keys fill several pages of slots quickly.
  private static func open(_ path: String, interval: UInt64 = 1 << 40, readOnly: Bool = false) throws -> CaskStore {
    let options = CheckpointFixture.options(interval: interval, segmentSize: 256 << 10, readOnly: readOnly)
    return try CaskStore(path: path, keys: CheckpointFixture.keys, options: options)
  }

  private static func key(_ number: UInt64) -> String {
    number % 4 == 1
      ? "users\u{0}\(number)" : number % 4 == 3 ? "a-key-longer-than-a-slot-holds-\(number)" : "k\(number)"
  }

  /// The store's ungrouped table and the page source it loads from.
  private static func ungrouped(_ store: CaskStore) -> KeyTable {
    store.state.withLock { $0.directory.ungrouped }
  }

  /// The page (counted in the table) where a lookup of `key` starts.
  private static func homePage(of key: String, in table: KeyTable) -> Int {
    let meta = IndexKey.withUTF8(of: key) { KeyTable.meta($0, hashKey: table.hashKey) }
    return KeyTable.home(meta, capacity: table.capacity) / CaskFormat.checkpointSlotsPerPage
  }

  /// Writes `byte ^ 0x01` in place (the same inode: the open store's descriptor sees it).
  private static func flipInPlace(_ path: String, at offset: UInt64) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    try handle.seek(toOffset: offset)
    let byte = try handle.read(upToCount: 1) ?? Data()
    try handle.seek(toOffset: offset)
    try handle.write(contentsOf: Data([(byte.first ?? 0) ^ 0x01]))
    try handle.synchronize()
  }

  @Test("a page damaged after open is detected when first touched, and nothing is answered from it")
  func damagedPageIsNeverAnsweredFrom() throws {
    try withTemporaryDirectory("checkpoint-lazy-damage") { directory in
      let path = directory.file("store")
      var model: [String: Data] = [:]
      var store = try Self.open(path)
      for number in 0..<6_000 {
        let key = "k\(number)"
        model[key] = Data("value-\(number)".utf8)
        try store.put(model[key]!, forKey: key)
      }
      try store.close()

      store = try Self.open(path)
      #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
      let table = Self.ungrouped(store)
      let lazy = try #require(table.storage.lazy, "the table was not loaded from the checkpoint")
      #expect(lazy.pageCount >= 4)
      #expect(!table.isFullyLoaded)
      // A key whose page is damaged, and one whose lookup cannot reach that page.
      let damaged = try #require(model.keys.first { Self.homePage(of: $0, in: table) == 1 })
      let healthy = try #require(model.keys.first { Self.homePage(of: $0, in: table) == 3 })
      #expect(try store.get(healthy) == model[healthy])

      let pages = try #require(store.state.withLock { $0.directory.pages })
      let number = lazy.source.firstPage + 1
      try Self.flipInPlace(CheckpointFixture.file(path), at: pages.positions[number] + 1_000)
      // Loaded before the damage: answered from memory, not read again.
      #expect(try store.get(healthy) == model[healthy])
      #expect(store.state.withLock { $0.directory.damage } == nil)

      #expect {
        _ = try store.get(damaged)
      } throws: { error in
        guard case CaskError.corrupt(let file, _, _) = error else { return false }
        return file.hasSuffix(CaskFormat.checkpointFileName)
      }
      // From then on the index answers nothing, and nothing is written through it.
      #expect(throws: CaskError.self) { try store.get(healthy) }
      #expect(throws: CaskError.self) { try store.contains(healthy) }
      #expect(throws: CaskError.self) { try store.keys() }
      #expect(throws: CaskError.self) { try store.put(Data("x".utf8), forKey: "new") }
      #expect(throws: CaskError.self) { try store.compact() }
      #expect(!FileManager.default.fileExists(atPath: CheckpointFixture.file(path)))
      try store.close()

      // The next open reads the hints and the log, and loses nothing.
      store = try Self.open(path)
      #expect(store.stats().recovery.segmentsFromCheckpoint == 0)
      #expect(try CheckpointFixture.contents(of: store) == model)
      try store.close()
    }
  }

  @Test("random gets, writes, listings, compactions, checkpoints and reopens from lazily loaded tables match a model")
  func matchesModel() throws {
    var random = SeededRandom.make(test: "CheckpointLazyLoadTests.matchesModel")
    try withTemporaryDirectory("checkpoint-lazy-property") { directory in
      let path = directory.file("store")
      let keySpace: UInt64 = 9_000
      var model: [String: Data] = [:]
      var store = try Self.open(path, interval: 16 << 10)
      for number in 0..<keySpace where number % 3 != 0 {
        let key = Self.key(number)
        model[key] = random.bytes(Int(random.next() % 24))
        try store.put(model[key]!, forKey: key)
      }
      var lazyOpens = 0
      var answeredLazily = 0
      for step in 0..<testIterations(200) {
        let key = Self.key(random.next() % keySpace)
        switch random.next() % 24 {
        case 0..<9:
          let lazy = !Self.ungrouped(store).isFullyLoaded
          #expect(try store.get(key) == model[key], "step \(step): get")
          if lazy { answeredLazily += 1 }
        case 9..<11:
          #expect(try store.contains(key) == (model[key] != nil), "step \(step): contains")
        case 11..<15:
          let value = random.bytes(Int(random.next() % 24))
          try store.put(value, forKey: key)
          model[key] = value
        case 15..<17:
          try store.delete(key)
          model[key] = nil
        case 17:
          let expected = model.keys.filter { $0.hasPrefix("users\u{0}") }.sorted {
            $0.utf8.lexicographicallyPrecedes($1.utf8)
          }
          #expect(try store.keys(inGroup: "users") == expected, "step \(step): group listing")
        case 18:
          #expect(store.count == model.count, "step \(step): count")
        case 19:
          _ = try store.compact()
        default:
          // A reopen from the checkpoint the close wrote (none after a compaction that
          // removed it and wrote too little since: then from the hints and the log).
          try store.close()
          store = try Self.open(path, interval: 16 << 10)
          if store.stats().recovery.segmentsFromCheckpoint > 0 && !Self.ungrouped(store).isFullyLoaded {
            lazyOpens += 1
          }
        }
      }
      #expect(try CheckpointFixture.contents(of: store) == model)
      #expect(store.stats().keys == model.count)
      try store.close()
      print(
        "[CheckpointLazyLoadTests.matchesModel] lazy opens \(lazyOpens), gets from unloaded tables \(answeredLazily)")
      #expect(lazyOpens > 0 && answeredLazily > 0, "no get ran on a table still loading: the test did not test it")
    }
  }

  @Test("readers on several threads load pages while a writer writes and checkpoints are written")
  func concurrentLoads() throws {
    try withTemporaryDirectory("checkpoint-lazy-threads") { directory in
      let path = directory.file("store")
      var store = try Self.open(path)
      var model: [String: Data] = [:]
      for number in 0..<8_000 as Range<UInt64> {
        let key = Self.key(number)
        model[key] = Data("v\(number)".utf8)
        try store.put(model[key]!, forKey: key)
      }
      try store.close()
      store = try Self.open(path, interval: 32 << 10)
      #expect(!Self.ungrouped(store).isFullyLoaded)
      let reading = store
      let expected = model
      let keys = Array(model.keys)
      let mismatches = Locked(0)
      DispatchQueue.concurrentPerform(iterations: 3) { worker in
        var random = SeededRandom(seed: UInt64(worker) + 1)
        for step in 0..<3_000 {
          if worker == 0 {
            // Keys of their own: the readers' keys keep their values.
            try? reading.put(Data("w\(step)".utf8), forKey: "written-\(step)")
          } else {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            if (try? reading.get(key)) != expected[key] { mismatches.withLock { $0 += 1 } }
          }
        }
      }
      #expect(mismatches.withLock { $0 } == 0)
      #expect(store.backgroundWriteFailure == nil)
      try store.close()
      store = try Self.open(path)
      for (key, value) in model { #expect(try store.get(key) == value) }
      #expect(try store.get("written-2999") == Data("w2999".utf8))
      try store.close()
    }
  }
}

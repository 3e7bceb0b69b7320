import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A sorted group's long keys are in its sorted pages already: the checkpoint writes no chunk
/// page for its table, lists where each chunk starts among the group's keys, and a reader makes
/// each chunk again from the sorted pages that hold its keys (Docs/FORMAT.md, section 18).
@Suite("Checkpoint: a sorted group's chunks made from its sorted pages")
struct CheckpointSortedChunkTests {
  static let keys = CheckpointFixture.keys
  static let group = "\u{1}cask.index\u{1}city\u{1}events"

  /// A directory with a sorted group of `count` keys (one in five short enough for its slot,
  /// the rest long and filling several 64 KiB chunks), long and short keys outside groups, and
  /// where each key's record is.
  static func directory(count: Int) -> (KeyDirectory, [String: RecordLocation]) {
    var directory = KeyDirectory(hashKey: KeyHashKey(k0: 5, k1: 6))
    var expected: [String: RecordLocation] = [:]
    for index in 0..<count {
      let key =
        index % 5 == 0
        ? "\(group)\u{0}\(index % 100)"
        : "\(group)\u{0}city-\(index % 37)-\(String(repeating: "q", count: index % 23))\u{0}event-\(index)"
      let location = RecordLocation(segment: 1, offset: UInt32(32 + index), length: 0)
      directory.applyPut(IndexKey(key), at: location)
      expected[key] = location
    }
    for index in 0..<200 {
      let key = index % 2 == 0 ? "k\(index)" : "a-key-outside-any-group-\(index)"
      let location = RecordLocation(segment: 1, offset: UInt32(32 + index), length: 10)
      directory.applyPut(IndexKey(key), at: location)
      expected[key] = location
    }
    return (directory, expected)
  }

  /// The root of `file` and a directory loaded lazily from it.
  static func load(_ file: Data) throws -> (Checkpoint, KeyDirectory) {
    let cipher = RecordCipher(keys: keys, version: CaskFormat.boundRecordsVersion)
    let bytes = [UInt8](file)
    let read = { (offset: UInt64, count: Int) -> [UInt8]? in
      guard offset <= UInt64(bytes.count), count <= bytes.count - Int(offset) else { return nil }
      return Array(bytes[Int(offset)..<Int(offset) + count])
    }
    let root = try Checkpoint.readRoot(size: UInt64(bytes.count), cipher: cipher, read: read)
    let pages = CheckpointPages(root: root, cipher: cipher, path: CaskFormat.checkpointFileName, read: read)
    return (root, try root.load(from: pages, cache: SortedPageCache(limit: 1 << 20)).0)
  }

  @Test("no chunk page is written for a sorted group, and every key is found in the chunks made from its sorted pages")
  func chunksFromSortedPages() throws {
    let (directory, expected) = Self.directory(count: 4_000)
    let plaintexts = try FuzzingEntry.checkpointPlaintexts(of: directory, segmentLength: 1 << 20, dataKeys: Self.keys)
    let (root, loaded) = try Self.load(try CheckpointReaderTests.assemble(plaintexts))
    let sorted = try #require(root.tables.firstIndex { $0.name == Array(Self.group.utf8) })
    #expect(root.tables[sorted].chunkLengths.count >= 2)
    #expect(root.sortedGroups.first?.chunkStarts.count == root.tables[sorted].chunkLengths.count)
    let chunkPages = plaintexts.dropFirst().filter { $0[1] == CaskFormat.checkpointPageChunk }
    #expect(!chunkPages.isEmpty, "the table outside groups keeps its chunk pages")
    #expect(chunkPages.allSatisfy { Int($0[8]) != sorted }, "a chunk page of the sorted group was written")

    // Lookups in a random order, each loading (making) the chunk it compares with.
    var random = SeededRandom.make(test: "checkpoint sorted chunks")
    for key in expected.keys.shuffled(using: &random) {
      #expect(loaded[IndexKey(key)] == expected[key], "key of \(key.utf8.count) bytes")
    }
    #expect(loaded.damage == nil)
    #expect(loaded[IndexKey("\(Self.group)\u{0}city-1-\u{0}event-missing")] == nil)
    #expect(Set(loaded.allKeys) == Set(expected.keys))
  }

  @Test("a chunk start that does not give the chunk's keys fails the chunk: its keys are reported, not found elsewhere")
  func lyingChunkStart() throws {
    let (directory, expected) = Self.directory(count: 4_000)
    var plaintexts = try FuzzingEntry.checkpointPlaintexts(of: directory, segmentLength: 1 << 20, dataKeys: Self.keys)
    #expect(
      FuzzingEntry.readCheckpoint(try CheckpointReaderTests.assemble(plaintexts), dataKeys: Self.keys) == expected.count
    )
    let (root, _) = try Self.load(try CheckpointReaderTests.assemble(plaintexts))
    let sorted = try #require(root.tables.firstIndex { $0.name == Array(Self.group.utf8) })
    // The sorted group is the last one, so its chunk starts come right before the page
    // references: the last chunk then starts at the group's last key, too few bytes to fill it.
    let last = plaintexts[0].count - CaskFormat.checkpointPageRefLength * root.pages.count - 4
    let lastKey = UInt32(root.tables[sorted].count - 1)
    withUnsafeBytes(of: lastKey.littleEndian) { plaintexts[0].replaceSubrange(last..<last + 4, with: $0) }
    let file = try CheckpointReaderTests.assemble(plaintexts)
    #expect(FuzzingEntry.readCheckpoint(file, dataKeys: Self.keys) == nil)
    let (_, loaded) = try Self.load(file)
    let chunks = root.tables[sorted].chunkLengths.count
    var failed = 0
    for key in expected.keys where key.hasPrefix(Self.group) && key.utf8.count > KeyTable.inlineLimit {
      let location = loaded[IndexKey(key)]
      // A key of another chunk is found; one of the lying chunk never at another place.
      #expect(location == nil || location == expected[key])
      if location == nil { failed += 1 }
    }
    #expect(failed > 0 && chunks >= 2)
    #expect(loaded.damage != nil)
  }

  @Test("a store's reserved group written to a checkpoint, reopened, changed and reopened holds what a model holds")
  func storeRoundTrip() throws {
    try withTemporaryDirectory("checkpoint-sorted-chunks") { directory in
      let path = directory.file("store")
      var random = SeededRandom.make(test: "checkpoint sorted chunks store")
      var model: [String: Data] = [:]
      var store = try CheckpointFixture.open(path)
      try store.batch { batch in
        for index in 0..<3_000 {
          let key = "\(Self.group)\u{0}city-\(random.next() % 40)\u{0}event-\(index)"
          try batch.put(Data(), forKey: key)
          model[key] = Data()
        }
      }
      try store.close()
      store = try CheckpointFixture.open(path)
      #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
      for key in model.keys.sorted().shuffled(using: &random).prefix(300) {
        if random.next() % 2 == 0 {
          _ = try store.delete(key)
          model[key] = nil
        } else {
          try store.put(Data("again".utf8), forKey: key)
          model[key] = Data("again".utf8)
        }
      }
      try store.close()
      let reopened = try CheckpointFixture.open(path, readOnly: true)
      #expect(reopened.stats().recovery.segmentsFromCheckpoint > 0)
      #expect(try CheckpointFixture.contents(of: reopened) == model)
      try reopened.close()
      try FileManager.default.removeItem(atPath: CheckpointFixture.file(path))
      let fromLog = try CheckpointFixture.open(path, readOnly: true)
      #expect(try CheckpointFixture.contents(of: fromLog) == model)
      try fromLog.close()
    }
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Synchronization
import Testing

@testable import CaskEngine

/// What an open of a cleanly closed store with a checkpoint asks of the file system: each of
/// its files opened once at most, no hint read (the checkpoint covers every segment), nothing
/// written, synced, created or removed. Prevents: a fixed cost at every open (an app's every
/// launch) from a file read twice or a hint authenticated that the checkpoint already covers.
@Suite("An open from a checkpoint reads each file once and writes nothing")
struct OpenFromCheckpointCostTests {
  /// No syncs or compaction, and a checkpoint also for a small store (the default leaves stores
  /// under 10,000 keys to their hints).
  static var checkpointed: CaskStore.Options {
    var options = CaskStore.Options(durability: .never, autoCompaction: nil)
    options.checkpoints = CaskStore.Checkpoints(minimumKeys: 1)
    return options
  }

  /// Forwards everything to a `RecordingFileSystem` and counts the files opened, by name.
  final class OpenCounter: ForwardingFileSystem, @unchecked Sendable {
    let opened = Mutex<[String: Int]>([:])

    override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
      let name = String(path.split(separator: "/").last ?? "")
      opened.withLock { $0[name, default: 0] += 1 }
      return try super.open(path, mode: mode)
    }
  }

  @Test("open and a first get of a checkpointed store open every file at most once and touch no hint")
  func openFromCheckpoint() throws {
    try withTemporaryDirectory("open-cost") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let options = Self.checkpointed
      let store = try CaskStore(path: path, keys: keys, options: options)
      try store.batch { batch in
        for index in 0..<2_000 { try batch.put(Data("value \(index)".utf8), forKey: "key \(index)") }
      }
      for index in stride(from: 0, to: 2_000, by: 3) {
        try store.put(Data("new \(index)".utf8), forKey: "key \(index)")
      }
      try store.close()
      #expect(FileManager.default.fileExists(atPath: "\(path)/\(CaskFormat.checkpointFileName)"))
      #expect(FileManager.default.fileExists(atPath: "\(path)/\(Segment.hintName(id: 1))"))

      let recorder = try RecordingFileSystem(root: path)
      let counter = OpenCounter(recorder)
      var counted = options
      counted.fileSystem = counter
      let reopened = try CaskStore(path: path, keys: keys, options: counted)
      #expect(try reopened.get("key 3") == Data("new 3".utf8))
      #expect(try reopened.get("key 4") == Data("value 4".utf8))
      #expect(reopened.stats().recovery.checkpointIgnored == nil)
      try reopened.close()

      let opened = counter.opened.withLock { $0 }
      #expect(opened[Segment.hintName(id: 1)] == nil, "a hint the checkpoint covers was opened")
      #expect(opened[CaskFormat.checkpointFileName] == 1)
      for (name, count) in opened { #expect(count == 1, "\(name) opened \(count) times") }
      #expect(recorder.operationCount == 0, "the open wrote: \(recorder.recording.operations)")
      #expect(recorder.anomalies.isEmpty)
    }
  }
}

extension OpenFromCheckpointCostTests {
  @Test("a first get after open reads one small page of slots (or two at a page's end), not a large one")
  func firstGetReadsOneSmallPage() throws {
    try withTemporaryDirectory("open-first-page") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let options = Self.checkpointed
      var store = try CaskStore(path: path, keys: keys, options: options)
      try store.batch { batch in
        for index in 0..<6_000 { try batch.put(Data("value \(index)".utf8), forKey: "key \(index)") }
      }
      try store.close()

      store = try CaskStore(path: path, keys: keys, options: options)
      defer { try? store.close() }
      let pages = try #require(store.state.withLock { $0.directory.pages })
      let lazy = try #require(store.state.withLock { $0.directory.ungrouped.storage.lazy })
      #expect(pages.reads.load(ordering: .relaxed) == 0, "open read a page of slots")
      // 6,000 keys in at least 8,192 slots: 32 pages of 256 slots or more (4 of 2,048 before,
      // each about 40 KB).
      let capacity = store.state.withLock { $0.directory.ungrouped.capacity }
      #expect(capacity >= 8_192 && lazy.pageCount * CaskFormat.checkpointSlotsPerPage >= capacity)
      #expect(lazy.pageCount >= 32)
      #expect(try store.get("key 4321") == Data("value 4321".utf8))
      let read = pages.reads.load(ordering: .relaxed)
      #expect(read >= 1 && read <= 2 && lazy.loadedPageCount == read)
      for page in 0..<lazy.pageCount - 1 {
        let length = pages.positions[lazy.source.firstPage + page + 1] - pages.positions[lazy.source.firstPage + page]
        #expect(length < 10_000, "slot page \(page) is \(length) bytes")
      }
    }
  }
}

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
      var options = CaskStore.Options(durability: .never, autoCompaction: nil)
      // A checkpoint also for this small store (the default leaves stores under 10,000 keys to
      // their hints).
      options.checkpoints = CaskStore.Checkpoints(minimumKeys: 1)
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

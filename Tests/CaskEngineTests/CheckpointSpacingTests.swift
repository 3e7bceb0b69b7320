import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Checkpoints spaced out as the store grows (`Options.Checkpoints.spacing`): one at a seal or
/// after the interval waits for `spacing` × 32 bytes of log per key the last one held, so that
/// a fill does not rewrite its whole index every `interval` bytes; a close still writes one,
/// and an open after a crash finds everything the log holds past the last one.
@Suite("Checkpoints are spaced out as the store grows")
struct CheckpointSpacingTests {
  /// Counts the checkpoints put in place (renames onto `CHECKPOINT`), each with the number
  /// of the put it was written during (`put`, set by the test before each put).
  final class CountingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let put = Locked(0)
    let written = Locked<[Int]>([])

    override func rename(_ source: String, to destination: String) throws {
      try super.rename(source, to: destination)
      if destination.hasSuffix("/\(CaskFormat.checkpointFileName)") {
        let put = put.withLock { $0 }
        written.withLock { $0.append(put) }
      }
    }
  }

  static let valueLength = 100

  /// Checkpoints every 4 KiB of log and at every seal (256 KiB segments) when not spaced; each
  /// written on the writer's thread, so that the put it happens during is known.
  static func options(spacing: Int, fileSystem: CountingFileSystem) -> CaskStore.Options {
    var options = CaskStore.Options(
      durability: .never, segmentSizeLimit: 256 << 10, autoCompaction: nil, fileSystem: fileSystem)
    options.checkpoints = CaskStore.Checkpoints(interval: 4 << 10, minimumKeys: 1, spacing: spacing)
    options.syncsBeforeCheckpoint = false
    return options
  }

  static func key(_ index: Int) -> String { "key-" + String(index + 1_000_000) }

  /// Puts `count` distinct keys, noting each put's number for the file system; returns the
  /// bytes of log per put (every record the same length, all live: the files hold zeros
  /// reserved ahead besides).
  static func fill(_ store: CaskStore, count: Int, fileSystem: CountingFileSystem) throws -> Double {
    let value = Data(repeating: 0x42, count: valueLength)
    for index in 0..<count {
      fileSystem.put.withLock { $0 = index }
      try store.put(value, forKey: key(index))
    }
    return Double(store.stats().liveBytes) / Double(count)
  }

  @Test("each checkpoint waits for 16 × 32 bytes of log per key the last one held, and no longer")
  func spacedByKeys() throws {
    try withTemporaryDirectory("checkpoint-spacing") { directory in
      let path = directory.file("store")
      let fileSystem = CountingFileSystem()
      let store = try CaskStore(
        path: path, keys: CheckpointFixture.keys, options: Self.options(spacing: 16, fileSystem: fileSystem))
      let count = 4000
      let perPut = try Self.fill(store, count: count, fileSystem: fileSystem)
      let during = fileSystem.written.withLock { $0 }
      print("[CheckpointSpacingTests.spacedByKeys] checkpoints during puts: \(during), \(perPut) bytes a put")
      // The first at the interval (a dozen puts), then each at about 2.5 times the keys of
      // the one before (512 bytes of log a key, about 330 bytes a put).
      #expect(during.count >= 5 && during.count <= 9, "\(during)")
      for (earlier, later) in zip(during, during.dropFirst()) {
        // The put a checkpoint is written during is in the index it takes, unless the
        // checkpoint came with a seal (before the put's record): `earlier` or one more keys.
        let wanted = 16 * 32 * Double(earlier)
        let log = Double(later - earlier) * perPut
        #expect(log >= wanted - 2 * perPut, "\(earlier) → \(later): \(log) bytes of log, \(wanted) wanted")
        #expect(
          log <= (wanted + 16 * 32) * 1.02 + 2 * perPut, "\(earlier) → \(later): \(log) bytes of log, a late checkpoint"
        )
      }
      try store.close()
      #expect(fileSystem.written.withLock { $0.count } == during.count + 1, "close writes one")
    }
  }

  @Test("spacing 0 takes one every interval, as before")
  func unspaced() throws {
    try withTemporaryDirectory("checkpoint-unspaced") { directory in
      let path = directory.file("store")
      let fileSystem = CountingFileSystem()
      let store = try CaskStore(
        path: path, keys: CheckpointFixture.keys, options: Self.options(spacing: 0, fileSystem: fileSystem))
      let perPut = try Self.fill(store, count: 4000, fileSystem: fileSystem)
      let during = fileSystem.written.withLock { $0.count }
      let intervals = Int(4000 * perPut) / (4 << 10)
      let seals = store.stats().segments - 1
      print("[CheckpointSpacingTests.unspaced] \(during) checkpoints, \(intervals) intervals, \(seals) seals")
      // Each one at the first put that reaches the interval, and one at each seal.
      #expect(during >= intervals * 9 / 10 && during <= intervals + seals + 1, "\(during), \(intervals), \(seals)")
      try store.close()
    }
  }

  @Test("a crash after spaced checkpoints: open reads the log past the last and serves every key")
  func crashAfterSpaced() throws {
    try withTemporaryDirectory("checkpoint-spacing-crash") { directory in
      let path = directory.file("store")
      let fileSystem = CountingFileSystem()
      var options = Self.options(spacing: 16, fileSystem: fileSystem)
      options.syncsBeforeCheckpoint = true
      let store = try CaskStore(path: path, keys: CheckpointFixture.keys, options: options)
      _ = try Self.fill(store, count: 3000, fileSystem: fileSystem)
      for index in stride(from: 0, to: 3000, by: 7) { try store.delete(Self.key(index)) }
      store.hintQueue.drain()
      #expect(!fileSystem.written.withLock { $0.isEmpty })
      // A crash: the files as they are, with no close.
      let crashed = directory.file("crashed")
      try CheckpointFixture.copy(path, to: crashed)
      try store.close()

      let reopened = try CaskStore(path: crashed, keys: CheckpointFixture.keys, options: CheckpointFixture.options())
      let recovery = reopened.stats().recovery
      #expect(recovery.checkpointIgnored == nil, "\(recovery)")
      #expect(recovery.segmentsFromCheckpoint > 0, "\(recovery)")
      #expect(recovery.corruptRegions.isEmpty && recovery.unreadableSegments.isEmpty, "\(recovery)")
      let expected = Set((0..<3000).filter { $0 % 7 != 0 }.map(Self.key))
      #expect(Set(try reopened.keys()) == expected)
      #expect(try reopened.get(Self.key(2999)) == Data(repeating: 0x42, count: Self.valueLength))
      try reopened.close()
    }
  }
}

import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// Automatic compaction merges the sealed segments only, on its own thread, so its errors
/// reach the caller through `stats()`.
@Suite("Automatic compaction")
struct AutomaticCompactionTests {
  @Test("an automatic compaction that fails (a full disk) is reported in stats, and the store keeps its data")
  func failureIsReportedInStats() throws {
    let fileSystem = FaultyFileSystem(directories: ["/data"])
    var options = CaskStore.Options(durability: .never, segmentSizeLimit: 128 << 10, fileSystem: fileSystem)
    options.keyDerivation = testKeyDerivation
    options.autoCompaction = .init(deadRatio: 0.1, minimumDeadBytes: 1)
    let store = try CaskStore(path: "/data/s.cask", password: testPassword, options: options)
    defer { try? store.close() }
    // A sealed segment with a live record and a dead one: the second large value does not fit
    // beside the first, so the writer seals the first segment and starts another.
    try store.put(Data("kept".utf8), forKey: "other")
    try store.put(Data(repeating: 1, count: 70 << 10), forKey: "k")
    try store.put(Data(repeating: 2, count: 70 << 10), forKey: "k")
    // The writer's segment has room for the writes below; the compaction's output cannot be made.
    fileSystem.inject(.init([.open], errno: ENOSPC, paths: { $0.hasSuffix(".seg.tmp") }))
    #expect(store.stats().automaticCompactionFailure == nil)
    // The 256th write starts the compaction.
    for round in 4...256 { try store.put(Data("value \(round)".utf8), forKey: "k") }
    let deadline = Date().addingTimeInterval(60)
    while store.stats().automaticCompactionFailure == nil && Date() < deadline { usleep(1_000) }
    guard case .io(let operation, _, let code) = store.stats().automaticCompactionFailure else {
      Issue.record("no failure reported: \(String(describing: store.stats().automaticCompactionFailure))")
      return
    }
    #expect(operation == "open" && code == ENOSPC)
    store.waitForCompaction()
    #expect(try store.get("k") == Data("value 256".utf8))
    #expect(try store.get("other") == Data("kept".utf8))
  }

  @Test("the segment being written is never compacted automatically, however much of it is dead")
  func activeSegmentIsLeftAlone() throws {
    try withTemporaryDirectory("auto-compaction-active") { directory in
      var options = testStoreOptions
      options.autoCompaction = .init(deadRatio: 0.1, minimumDeadBytes: 1)
      let store = try CaskStore(path: directory.file("s"), password: testPassword, options: options)
      defer { try? store.close() }
      // Checks at the 256th and the 512th write, each with nearly every byte dead.
      for round in 0..<600 { try store.put(Data("value \(round)".utf8), forKey: "k") }
      store.waitForCompaction()
      let stats = store.stats()
      #expect(stats.compactions == 0)
      #expect(stats.segments == 1)
      #expect(stats.deadBytes > 100 * stats.liveBytes)
      #expect(try store.get("k") == Data("value 599".utf8))
    }
  }

  @Test("an automatic compaction merges the sealed segments and leaves the active one to the writer, unsealed")
  func sealedSegmentsOnly() throws {
    try withTemporaryDirectory("auto-compaction-sealed") { directory in
      var options = testStoreOptions
      options.segmentSizeLimit = 16 << 10
      // Run by hand below, at a moment the test chooses.
      options.autoCompaction = nil
      let path = directory.file("s")
      let store = try CaskStore(path: path, password: testPassword, options: options)
      var model: [String: Data] = [:]
      for round in 0..<6 {
        for index in 0..<20 {
          let value = Data(repeating: UInt8(round), count: 300) + Data("\(index)".utf8)
          try store.put(value, forKey: "key-\(index)")
          model["key-\(index)"] = value
        }
      }
      for index in stride(from: 0, to: 20, by: 3) {
        try store.delete("key-\(index)")
        model["key-\(index)"] = nil
      }
      let before = store.writer.withLock { ($0.active?.segment.id, $0.active?.end) }
      let active = try #require(before.0)
      let segmentsBefore = store.stats().segments
      #expect(segmentsBefore >= 3, "too few sealed segments to merge: \(segmentsBefore - 1)")
      try store.compactAutomatically(niceIncrement: 0)
      let after = store.writer.withLock { ($0.active?.segment.id, $0.active?.end) }
      #expect(after.0 == active && after.1 == before.1, "the active segment was sealed or moved")
      #expect(store.stats().compactions == 1)
      #expect(store.stats().segments < segmentsBefore)
      #expect(FileManager.default.fileExists(atPath: "\(path)/\(Segment.fileName(id: active))"))
      // The writer goes on in the same segment.
      try store.put(Data("after".utf8), forKey: "after")
      model["after"] = Data("after".utf8)
      #expect(store.writer.withLock { $0.active?.segment.id } == active)
      for index in 0..<20 { #expect(try store.get("key-\(index)") == model["key-\(index)"], "key-\(index)") }
      try store.close()
      let reopened = try CaskStore(path: path, password: testPassword, options: options)
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.isClean)
      #expect(reopened.count == model.count)
      for (key, value) in model { #expect(try reopened.get(key) == value, "\(key) after reopen") }
    }
  }

  @Test("a key overwritten or deleted in the active segment keeps a value after a crash loses its unsynced tail")
  func inputsGoOnlyOnceWhatReplacedThemIsDurable() throws {
    let fileSystem = FaultyFileSystem(directories: ["/data"])
    var options = CaskStore.Options(
      durability: .never, segmentSizeLimit: 16 << 10, autoCompaction: nil, fileSystem: fileSystem)
    options.keyDerivation = testKeyDerivation
    let path = "/data/s.cask"
    let store = try CaskStore(path: path, password: testPassword, options: options)
    let old = Data(repeating: 1, count: 300)
    // Sealed segments, the first holding key-0 and key-1, all of it synced.
    for index in 0..<80 { try store.put(old, forKey: "key-\(index)") }
    try store.sync()
    // Neither synced: both make a record of a sealed segment dead, which the compaction then
    // does not copy.
    try store.put(Data("newer".utf8), forKey: "key-0")
    try store.delete("key-1")
    try store.compactAutomatically(niceIncrement: 0)
    #expect(store.stats().compactions == 1)
    var survivorOptions = options
    survivorOptions.fileSystem = fileSystem.crashLosingUnsyncedChanges()
    let reopened = try CaskStore(path: path, password: testPassword, options: survivorOptions)
    defer { try? reopened.close() }
    let first = try reopened.get("key-0")
    #expect(first == Data("newer".utf8) || first == old, "key-0 lost both its values")
    let second = try reopened.get("key-1")
    #expect(second == nil || second == old)
    for index in 2..<80 { #expect(try reopened.get("key-\(index)") == old, "key-\(index)") }
  }
}

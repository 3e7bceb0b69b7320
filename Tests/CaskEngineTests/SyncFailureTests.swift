import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A writer is told its write is durable only when a sync that covered it succeeded, also when
/// that sync failed in `close()` or beside a seal. Prevents a writer that waited on such a
/// sync returning as if its write were on disk; each test plays the interleaving step by step
/// through the internal API.
@Suite("A failed sync never lets a writer believe its write is durable")
struct SyncFailureTests {
  /// Appends a one-put batch under the writer lock, as `commit` does, without waiting.
  private static func append(_ store: CaskStore, _ key: String, bytes: Int) throws -> UInt64 {
    var batch = CaskBatch()
    try batch.put(Data(repeating: 7, count: bytes), forKey: key)
    var prepared = try store.prepare(batch)
    return try store.writer.withLock { writer in try store.append(&prepared, writer: &writer) }.0
  }

  @Test(
    "close() failing to cut reserved zeros or to sync: a writer still waiting gets the error",
    arguments: [FaultyFileSystem.Operation.truncate, .sync])
  func waiterAfterFailedClose(operation: FaultyFileSystem.Operation) throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let options = FaultWorkload.options(fileSystem, segmentSizeLimit: 4 << 20)
    let store = try FaultWorkload.open(options)
    try store.put(Data("one".utf8), forKey: "a")
    // Another thread's put: appended, not yet waiting for its sync.
    let ticket = try Self.append(store, "b", bytes: 3)
    fileSystem.inject(FaultyFileSystem.Fault([operation], times: 1))
    #expect(throws: CaskError.self) { try store.close() }
    var acknowledged = false
    do {
      try store.waitUntilDurable(ticket)
      acknowledged = true
    } catch {}
    #expect(!acknowledged, "\(operation): a put close() did not sync was acknowledged")

    let survivor = fileSystem.crashLosingUnsyncedChanges()
    let reopened = try FaultWorkload.open(FaultWorkload.options(survivor, segmentSizeLimit: 4 << 20))
    defer { try? reopened.close() }
    #expect(try reopened.get("a") == Data("one".utf8), "\(operation): an acknowledged put was lost")
  }

  @Test("a group-commit sync fails, then another writer seals the segment: the seal fails too, nobody is acknowledged")
  func sealAfterFailedLeaderSync() throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let options = FaultWorkload.options(fileSystem, segmentSizeLimit: 4096)
    let store = try FaultWorkload.open(options)
    try store.put(Data("one".utf8), forKey: "a")
    _ = try Self.append(store, "w1", bytes: 100)
    let waiting = try Self.append(store, "w2", bytes: 100)
    // The leader's fdatasync (outside the writer lock) fails; before the leader can record
    // the failure under the writer lock, another writer's append does not fit and seals.
    let file = try #require(store.writer.withLock { $0.active?.segment.file })
    fileSystem.inject(FaultyFileSystem.Fault([.sync], times: 1))
    #expect(throws: CaskError.self) { try store.groupCommit.sync(file) }
    #expect(throws: CaskError.self) { _ = try Self.append(store, "w3", bytes: 3900) }
    var acknowledged = false
    do {
      try store.waitUntilDurable(waiting)
      acknowledged = true
    } catch {}
    #expect(!acknowledged, "w2 was acknowledged after its sync failed")
    // Later writes fail until the store is reopened.
    #expect(throws: CaskError.self) { try store.put(Data("later".utf8), forKey: "later") }

    let survivor = fileSystem.crashLosingUnsyncedChanges()
    let reopened = try FaultWorkload.open(FaultWorkload.options(survivor, segmentSizeLimit: 4096))
    defer { try? reopened.close() }
    #expect(try reopened.get("a") == Data("one".utf8))
  }
}

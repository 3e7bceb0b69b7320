import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Under `.never` and `.periodic` the writer hands each completed stretch of appended records
/// to the kernel's writeback (`StorageFile.startWriteback`), so that sealing a full segment
/// does not write all of it while the writer waits. It must never sync anything, never hand
/// over bytes not yet appended, and leave `.always` (which syncs every commit) alone.
@Suite("Writeback of appended records")
struct WritebackTests {
  /// The calls of `records` puts of 1,000 bytes, and where the active segment ends after them.
  private static func fill(
    _ durability: CaskStore.Durability, records: Int
  ) throws -> (calls: SegmentCallCounter.Calls, end: UInt64) {
    let fileSystem = SegmentCallCounter()
    var options = testStoreOptions
    options.durability = durability
    options.fileSystem = fileSystem
    var calls = SegmentCallCounter.Calls()
    var end: UInt64 = 0
    try withTemporaryDirectory("writeback") { directory throws in
      let path = directory.file("store.cask")
      let store = try CaskStore(path: path, password: testPassword, options: options)
      let value = Data(repeating: 0x5A, count: 1000)
      // The first put makes the segment, whose header is synced: counted from the second.
      try store.put(value, forKey: "key-0")
      fileSystem.calls.withLock { $0 = SegmentCallCounter.Calls() }
      for index in 1..<records { try store.put(value, forKey: "key-\(index)") }
      end = store.writer.withLock { $0.active?.end ?? 0 }
      calls = fileSystem.calls.withLock { $0 }
      try store.close()
      let reopened = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      defer { try? reopened.close() }
      #expect(reopened.count == records)
    }
    return (calls, end)
  }

  @Test("under .never every full stretch of appended records goes to writeback, in order, behind the writer, unsynced")
  func neverHandsStretchesToWriteback() throws {
    // 9,000 records of about 1.2 KB: 10.8 MB, one stretch of 8 MiB and the rest.
    let (calls, end) = try Self.fill(.never, records: 9_000)
    #expect(calls.syncs == 0, "\(calls.syncs) syncs before close")
    #expect(calls.writeback.count == 1, "\(calls.writeback)")
    var next: UInt64 = 0
    for range in calls.writeback {
      #expect(range.offset == next)
      #expect(range.count >= CaskStore.writebackChunk)
      #expect((range.offset + range.count) % (64 << 10) == 0)
      next = range.offset + range.count
    }
    #expect(next > 0 && next <= end, "handed over up to \(next) of \(end)")
  }

  @Test("under .always nothing goes to writeback: every commit syncs")
  func alwaysLeavesWritebackAlone() throws {
    let (calls, _) = try Self.fill(.always, records: 300)
    #expect(calls.writeback.isEmpty)
    #expect(calls.syncs >= 299)
  }
}

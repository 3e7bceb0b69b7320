import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CaskEngine

/// The compaction lock, held by a backup choosing its files (or by a compaction), makes a
/// compaction started meanwhile wait, then run. Under ThreadSanitizer this is the interleaving
/// that was reported as a data race while the lock was a `Locked<Void>` (a false report that
/// failed CI's sanitizer run; see `CriticalSection`).
@Suite("A compaction waits for the compaction lock")
struct CompactionLockTests {
  @Test("a compaction started while the lock is held waits, then compacts")
  func compactionWaitsForTheLock() throws {
    let options = CaskStore.Options(durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)
    try withStore(options: options, label: "compaction-lock") { store, _ throws in
      for round in 0..<20 {
        try store.put(Data("round \(round) \(String(repeating: "x", count: 400))".utf8), forKey: "key")
      }
      // The thread is started before the lock is taken and learns that it is held through a
      // relaxed atomic, which orders nothing: as in a store, where the compacting thread has no
      // synchronisation with the one holding the lock but the lock itself.
      let held = Atomic(false)
      let finished = DispatchSemaphore(value: 0)
      let outcome = Locked<String?>(nil)
      Thread.detachNewThread {
        while !held.load(ordering: .relaxed) { usleep(100) }
        let text: String
        do {
          text = try store.compact().map { "compacted \($0.inputSegments) segments" } ?? "nothing to compact"
        } catch {
          text = "failed: \(error)"
        }
        outcome.withLock { $0 = text }
        finished.signal()
      }
      store.compactionLock.run {
        held.store(true, ordering: .relaxed)
        // Gives the thread time to reach the lock; the assertion holds however long it takes.
        usleep(50_000)
        #expect(outcome.withLock { $0 } == nil, "the compaction ran while the lock was held")
      }
      finished.wait()
      let text = try #require(outcome.withLock { $0 })
      #expect(text.hasPrefix("compacted"), "\(text)")
      #expect(try store.get("key").map { String(decoding: $0.prefix(8), as: UTF8.self) } == "round 19")
    }
  }
}

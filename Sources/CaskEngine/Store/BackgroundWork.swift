import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The store's two background jobs: the periodic sync of `.periodic` durability, and
/// automatic compaction when dead bytes pass the configured threshold. Both hold the store
/// weakly and end with `stop()` (called by `close()`).
final class BackgroundWork: Sendable {
  private struct State {
    var stopped = false
    var compacting = false
    var writesSinceCheck = 0
    /// The error of the last automatic compaction, if it failed; cleared by one that works.
    var compactionFailure: CaskError?
  }

  private let state = Locked(State())
  /// Monotonic, so that a wall clock set back does not stop the periodic sync for that long.
  private let wake = MonotonicCondition()
  private let finished = DispatchGroup()

  /// Starts the periodic syncer when the store's durability asks for one.
  func start(store: CaskStore) {
    guard case .periodic(let seconds) = store.options.durability, !store.options.readOnly else { return }
    let interval = max(0.001, seconds)
    finished.enter()
    let thread = Thread { [weak store, self] in
      Thread.current.threadDictionary[Self.marker] = true
      defer { self.finished.leave() }
      while true {
        self.wake.lock()
        // Checked under `wake`, which `stop()` takes after setting the flag: a stop that came
        // before this point (the thread was starting, or busy in `sync()`) is seen here rather
        // than its wake-up missed, which made `close()` wait out a whole interval.
        if !self.state.withLock({ $0.stopped }) {
          self.wake.wait(until: MonotonicCondition.now() + UInt64(interval * 1e9))
        }
        self.wake.unlock()
        guard !self.state.withLock({ $0.stopped }), let store else { return }
        // A failure is kept by the store and reported to the next writer.
        try? store.sync()
      }
    }
    thread.name = "CipherCask periodic sync"
    thread.start()
  }

  /// Called after each write: every so often, checks whether compaction is due and starts it.
  func noteWrite(store: CaskStore) {
    guard let policy = store.options.autoCompaction else { return }
    let due = state.withLock { state -> Bool in
      state.writesSinceCheck += 1
      guard !state.stopped, !state.compacting, state.writesSinceCheck >= 256 else { return false }
      state.writesSinceCheck = 0
      return true
    }
    guard due else { return }
    // The sealed segments' bytes only: automatic compaction leaves the active segment to the
    // writer, so its dead bytes wait until it fills and is sealed. Prevents: a run of deletes
    // within one segment setting off a compaction that frees nothing it could reach.
    let sealed = store.sealedSegmentUsage()
    let total = sealed.live + sealed.dead
    // Segments under an older key epoch are compacted whatever their garbage: until then an
    // old header and its password still open them (a password change's rotation).
    guard
      store.hasOlderKeyEpochs
        || (total > 0 && sealed.dead >= policy.minimumDeadBytes
          && Double(sealed.dead) / Double(total) >= policy.deadRatio)
    else { return }
    let start = state.withLock { state -> Bool in
      guard !state.stopped, !state.compacting else { return false }
      state.compacting = true
      return true
    }
    guard start else { return }
    finished.enter()
    let niceIncrement = policy.niceIncrement
    let thread = Thread { [weak store, self] in
      Thread.current.threadDictionary[Self.marker] = true
      defer {
        self.state.withLock { $0.compacting = false }
        self.finished.leave()
      }
      // Kept for `stats()` (automaticCompactionFailure) rather than dropped. One that stopped
      // because the store is closing did not fail.
      let outcome: CaskError?
      do {
        // A thread of its own, ended with the compaction: only it runs at the lower priority.
        // Prevents: a compaction that a run of deletes sets off taking half of the CPU the
        // process gets (Linux groups a session's threads) from the writer for all of its copy.
        try store?.compactAutomatically(niceIncrement: niceIncrement)
        outcome = nil
      } catch CaskError.closed {
        return
      } catch {
        outcome = CaskError.converting(error, operation: "compaction", path: store?.path ?? "")
      }
      self.state.withLock { $0.compactionFailure = outcome }
    }
    thread.name = "CipherCask compaction"
    thread.start()
  }

  /// The error of the last automatic compaction, if it failed.
  var compactionFailure: CaskError? { state.withLock { $0.compactionFailure } }

  /// Whether `close()` has begun; compaction checks it between steps.
  var isStopped: Bool { state.withLock { $0.stopped } }

  /// Stops both jobs and waits for them to finish.
  func stop() {
    state.withLock { $0.stopped = true }
    wake.lock()
    wake.broadcast()
    wake.unlock()
    // The last reference to a store can be dropped on a background thread, whose close()
    // must not wait for itself.
    if Thread.current.threadDictionary[Self.marker] == nil { finished.wait() }
  }

  private static let marker = "CipherCask.background"
}

import Foundation

/// A value guarded by a lock, used like `Synchronization.Mutex` but built on a pthread mutex
/// (`NSLock`).
///
/// Why not `Mutex`: on Linux (Swift 6.3) it locks with futex calls that ThreadSanitizer does
/// not see, so `swift test --sanitize=thread` reports every access it guards as a data race,
/// and real races drown in false ones. TSan intercepts pthread mutexes. What it costs: one
/// allocation per lock, made when a store opens.
///
/// The value lives in memory of its own, reached through a pointer, rather than in a stored
/// `var`. Prevents: a run-time exclusivity check (`swift_beginAccess`) on every `withLock`,
/// which the lock already guarantees; a put takes four of these locks.
package final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private let value: UnsafeMutablePointer<Value>

  package init(_ value: Value) {
    assert(MemoryLayout<Value>.size > 0, "an empty value: use CriticalSection, whose reason is there")
    self.value = .allocate(capacity: 1)
    self.value.initialize(to: value)
  }

  deinit {
    value.deinitialize(count: 1)
    value.deallocate()
  }

  /// Runs `body` with exclusive access to the value.
  package func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value.pointee)
  }
}

/// A pthread mutex that guards a stretch of work instead of a value: one compaction at a
/// time, and a backup's choice of files against a compaction.
///
/// Why not `Locked<Void>`: an empty value lies at offset 0 of its object, where the object's
/// header is, so ThreadSanitizer takes the exclusive access to it inside `withLock` for a
/// write to the header, and any thread reading that header on its way into `withLock` (for
/// the type of the value, before it takes the lock) for a data race: a false report, seen in
/// CI when a compaction waited for a backup.
package final class CriticalSection: Sendable {
  private let lock = NSLock()

  package init() {}

  /// Runs `body` while no other `run` of this section does.
  package func run<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }
}

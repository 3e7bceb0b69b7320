import Foundation

/// A value guarded by a lock, used like `Synchronization.Mutex` but built on a pthread mutex
/// (`NSLock`).
///
/// Why not `Mutex`: on Linux (Swift 6.3) it locks with futex calls that ThreadSanitizer does
/// not see, so `swift test --sanitize=thread` reports every access it guards as a data race,
/// and real races drown in false ones. TSan intercepts pthread mutexes. What it costs: one
/// allocation per lock, made when a store opens.
package final class Locked<Value>: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var value: Value

  package init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with exclusive access to the value.
  package func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

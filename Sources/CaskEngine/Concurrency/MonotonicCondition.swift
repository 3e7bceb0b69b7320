import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A pthread mutex with a condition variable whose timed waits run on the monotonic clock.
///
/// Prevents: a wait with a deadline that stalls when the wall clock is set back (by NTP, or by
/// hand). `NSCondition.wait(until:)` takes a `Date`, a wall-clock time: set back by an hour
/// during a 0.5 ms wait, it sleeps for an hour. Here every deadline is a `CLOCK_MONOTONIC`
/// reading, which only moves forward. Built on pthreads (as `Locked` is) so that
/// ThreadSanitizer sees it.
final class MonotonicCondition: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

  init() {
    pthread_mutex_init(mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  /// The monotonic clock, in nanoseconds since an arbitrary start.
  static func now() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  func lock() { pthread_mutex_lock(mutex) }

  func unlock() { pthread_mutex_unlock(mutex) }

  /// Releases the lock until woken (or spuriously), then takes it again.
  func wait() { pthread_cond_wait(condition, mutex) }

  /// As `wait()`, but returns at `deadline` (a `now()` reading) at the latest.
  ///
  /// - Returns: `false` when the deadline passed without a wake-up.
  @discardableResult
  func wait(until deadline: UInt64) -> Bool {
    var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
    return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
  }

  /// Wakes every waiter.
  func broadcast() { pthread_cond_broadcast(condition) }
}

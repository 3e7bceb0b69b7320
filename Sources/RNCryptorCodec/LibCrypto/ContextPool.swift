import Foundation

/// A few idle libcrypto contexts kept for reuse, so that encrypting a small message does not
/// allocate, key and free a context each time. Contexts are handed out to one user at a time.
final class ContextPool: @unchecked Sendable {
  private let lock = NSLock()
  private var idle: [OpaquePointer] = []
  private let capacity: Int
  private let release: (OpaquePointer) -> Void

  init(capacity: Int = 8, release: @escaping (OpaquePointer) -> Void) {
    self.capacity = capacity
    self.release = release
  }

  deinit {
    for context in idle { release(context) }
  }

  /// An idle context, or `nil` if none is left.
  func take() -> OpaquePointer? {
    lock.lock()
    defer { lock.unlock() }
    return idle.popLast()
  }

  /// Returns a context for reuse (or frees it when the pool is full).
  func give(_ context: OpaquePointer) {
    lock.lock()
    if idle.count < capacity {
      idle.append(context)
      lock.unlock()
    } else {
      lock.unlock()
      release(context)
    }
  }
}

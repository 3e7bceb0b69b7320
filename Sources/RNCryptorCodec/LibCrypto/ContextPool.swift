import Synchronization

/// A few idle libcrypto contexts kept for reuse, so that encrypting a small message does not
/// allocate, key and free a context each time. Contexts are handed out to one user at a time.
final class ContextPool: @unchecked Sendable {
  // A futex lock inline rather than an NSLock object: taken twice per message. The contexts
  // are kept as addresses, which are Sendable (the pool hands each to one user at a time).
  private let idle = Mutex<[UInt]>([])
  private let capacity: Int
  private let release: (OpaquePointer) -> Void

  init(capacity: Int = 8, release: @escaping (OpaquePointer) -> Void) {
    self.capacity = capacity
    self.release = release
  }

  deinit {
    for address in idle.withLock({ $0 }) {
      if let context = OpaquePointer(bitPattern: address) { release(context) }
    }
  }

  /// An idle context, or `nil` if none is left.
  func take() -> OpaquePointer? {
    idle.withLock { $0.popLast() }.flatMap { OpaquePointer(bitPattern: $0) }
  }

  /// Returns a context for reuse (or frees it when the pool is full).
  func give(_ context: OpaquePointer) {
    let address = UInt(bitPattern: context)
    let kept = idle.withLock { idle in
      guard idle.count < capacity else { return false }
      idle.append(address)
      return true
    }
    if !kept { release(context) }
  }
}

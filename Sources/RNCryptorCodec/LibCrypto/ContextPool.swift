import Foundation
import Synchronization

/// A few idle libcrypto contexts kept for reuse, so that encrypting a small message does not
/// allocate, key and free a context each time. Contexts are handed out to one user at a time.
///
/// One idle context waits in an atomic slot in front of the locked list: a single thread
/// sealing or opening message after message takes and gives back that one with an atomic
/// exchange each. Prevents: two lock round trips per message (four per record), a tenth of
/// the engine's work outside libcrypto. The list behind it serves threads that overlap.
final class ContextPool: @unchecked Sendable {
  /// The context in the fast slot as its address, or 0 when the slot is empty.
  private let spare = Atomic<UInt>(0)
  private let lock = NSLock()
  private var idle: [OpaquePointer] = []
  private let capacity: Int
  private let release: (OpaquePointer) -> Void

  init(capacity: Int = 8, release: @escaping (OpaquePointer) -> Void) {
    self.capacity = capacity
    self.release = release
  }

  deinit {
    if let context = OpaquePointer(bitPattern: spare.exchange(0, ordering: .acquiring)) { release(context) }
    for context in idle { release(context) }
  }

  /// An idle context, or `nil` if none is left.
  func take() -> OpaquePointer? {
    // Acquiring: the context's state written by the thread that gave it back is visible here.
    if let context = OpaquePointer(bitPattern: spare.exchange(0, ordering: .acquiring)) { return context }
    lock.lock()
    defer { lock.unlock() }
    return idle.popLast()
  }

  /// Returns a context for reuse (or frees it when the pool is full).
  func give(_ context: OpaquePointer) {
    let address = UInt(bitPattern: context)
    if spare.compareExchange(expected: 0, desired: address, ordering: .releasing).exchanged { return }
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

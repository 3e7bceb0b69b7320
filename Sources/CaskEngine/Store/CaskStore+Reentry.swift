import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The thread running user code with the writer held: a transaction body or a change observer.
///
/// Such code calling back into an operation that takes the writer (a write, `sync`, `compact`,
/// `verify`, a password change, `close`) would wait for a lock its own thread holds, forever.
/// The operation checks this mark first and throws `CaskError.reentrantCall` instead
/// (Docs/ARCHITECTURE.md, rule 8).
final class UserCodeMark: Sendable {
  /// `pthread_self()` of the thread inside user code, or 0. Only that thread ever stores its
  /// own id here, and it reads its own latest store, so relaxed ordering suffices: another
  /// thread may read a stale id, never its own.
  private let thread = Atomic<UInt>(0)

  private static var current: UInt { UInt(pthread_self()) }

  /// Runs `body` (user code, called with the writer held) marked as such on this thread.
  func running<R>(_ body: () throws -> R) rethrows -> R {
    let previous = thread.exchange(Self.current, ordering: .relaxed)
    defer { thread.store(previous, ordering: .relaxed) }
    return try body()
  }

  /// Throws when this thread is inside user code of the same store.
  func refuse(_ operation: String) throws {
    if thread.load(ordering: .relaxed) == Self.current { throw CaskError.reentrantCall(operation: operation) }
  }
}

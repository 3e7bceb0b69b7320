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
  /// `pthread_self()` of a thread working for the user code above (an import's decoding
  /// thread), or 0; the same ordering argument holds.
  private let helper = Atomic<UInt>(0)

  private static var current: UInt { UInt(pthread_self()) }

  /// Runs `body` (user code, called with the writer held) marked as such on this thread.
  func running<R>(_ body: () throws -> R) rethrows -> R {
    let previous = thread.exchange(Self.current, ordering: .relaxed)
    defer { thread.store(previous, ordering: .relaxed) }
    return try body()
  }

  /// Runs `body` marked as working for the user code that holds the writer, on a thread of
  /// its own.
  func runningAsHelper<R>(_ body: () throws -> R) rethrows -> R {
    let previous = helper.exchange(Self.current, ordering: .relaxed)
    defer { helper.store(previous, ordering: .relaxed) }
    return try body()
  }

  /// Throws when this thread is inside user code of the same store, or works for it.
  func refuse(_ operation: String) throws {
    let current = Self.current
    if thread.load(ordering: .relaxed) == current || helper.load(ordering: .relaxed) == current {
      throw CaskError.reentrantCall(operation: operation)
    }
  }
}

extension CaskStore {
  /// Runs `body` on this thread, which works for a streamed batch under way on another one
  /// (an import that decodes on a second thread), so that a write `body` makes to this store
  /// throws `CaskError.reentrantCall` instead of waiting forever for the writer the batch holds.
  package func runningForStreamedBatch<R>(_ body: () throws -> R) rethrows -> R {
    try userCode.runningAsHelper(body)
  }
}

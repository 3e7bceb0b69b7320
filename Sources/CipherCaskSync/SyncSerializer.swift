import CipherCask
import Foundation

/// Lets one sync call at a time change a collection's local state, first come first served:
/// `pull`, `pullAll`, `push`, `delete(id:)` and a whole `pushPending` run. Every
/// `RemoteCollection` of the same store and collection shares one (`shared(for:)`), so two
/// values made separately still take turns.
///
/// Why: a call stores what its answer says when the answer comes. Two calls at once store
/// in the order their answers arrive, which need not be the order the server applied them:
/// an older answer and ETag (a change sent twice, the server replaying its first answer; a
/// page fetched before a push was applied) then overwrite a newer one. Held from before the
/// first request to after the last store, the turn makes the order of storing the order of
/// the server's answers.
///
/// A caller cancelled while it waits for its turn leaves the line at once and throws
/// `SyncError.cancelled`, having done nothing; the callers behind it keep their places.
final class SyncSerializer: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var busy = false
  private var waiting: [Waiter] = []
  /// Callers that asked for a turn and are not yet in `waiting` nor running: a cancellation
  /// that comes meanwhile removes the id, and the caller then leaves without waiting.
  private var arriving: Set<UInt64> = []
  private var lastID: UInt64 = 0

  private struct Waiter {
    var id: UInt64
    /// Resumed with `true` for the turn, `false` when cancelled.
    var continuation: CheckedContinuation<Bool, Never>
  }

  /// Runs `body` once every call that asked for a turn before it has ended.
  ///
  /// - Throws: `SyncError.cancelled` when the task is cancelled before its turn comes
  ///   (`body` is not run); what `body` throws.
  func run<R: Sendable>(_ body: () async throws -> R) async throws -> R {
    try await acquire()
    defer { release() }
    return try await body()
  }

  /// How many callers wait for a turn (for tests).
  var waitingCount: Int {
    lock.withLock { waiting.count }
  }

  private func acquire() async throws {
    let id = lock.withLock {
      lastID += 1
      arriving.insert(lastID)
      return lastID
    }
    let granted = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        lock.lock()
        guard arriving.remove(id) != nil else {
          lock.unlock()
          continuation.resume(returning: false)
          return
        }
        if busy {
          waiting.append(Waiter(id: id, continuation: continuation))
          lock.unlock()
        } else {
          busy = true
          lock.unlock()
          continuation.resume(returning: true)
        }
      }
    } onCancel: {
      lock.lock()
      if arriving.remove(id) != nil {
        lock.unlock()
      } else if let index = waiting.firstIndex(where: { $0.id == id }) {
        let waiter = waiting.remove(at: index)
        lock.unlock()
        waiter.continuation.resume(returning: false)
      } else {
        lock.unlock()
      }
    }
    guard granted else { throw SyncError.cancelled }
  }

  private func release() {
    lock.lock()
    guard !waiting.isEmpty else {
      busy = false
      lock.unlock()
      return
    }
    let next = waiting.removeFirst()
    lock.unlock()
    next.continuation.resume(returning: true)
  }

  // MARK: One per store and collection

  private static let registryLock = NSLock()
  // Guarded by `registryLock`.
  nonisolated(unsafe) private static var registry: [String: WeakSerializer] = [:]

  private struct WeakSerializer {
    weak var serializer: SyncSerializer?
  }

  /// The serializer of `collection` in the store at `path` (resolved: one for every spelling
  /// of the store's path), made on first use and kept while a `RemoteCollection` holds it.
  static func shared(path: String, collection: String) -> SyncSerializer {
    let key = path + "\u{0}" + collection
    registryLock.lock()
    defer { registryLock.unlock() }
    if let existing = registry[key]?.serializer { return existing }
    registry = registry.filter { $0.value.serializer != nil }
    let made = SyncSerializer()
    registry[key] = WeakSerializer(serializer: made)
    return made
  }
}

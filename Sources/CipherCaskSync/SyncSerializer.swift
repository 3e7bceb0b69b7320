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
/// A caller waiting for its turn is not woken by cancellation; once its turn comes, the call
/// sees the cancellation before its first request and ends with `SyncError.cancelled`.
final class SyncSerializer: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var busy = false
  private var waiting: [CheckedContinuation<Void, Never>] = []

  /// Runs `body` once every call that asked for a turn before it has ended.
  func run<R: Sendable>(_ body: () async throws -> R) async throws -> R {
    await acquire()
    defer { release() }
    return try await body()
  }

  private func acquire() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      lock.lock()
      if busy {
        waiting.append(continuation)
        lock.unlock()
      } else {
        busy = true
        lock.unlock()
        continuation.resume()
      }
    }
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
    next.resume()
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

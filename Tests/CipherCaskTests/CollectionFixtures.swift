import CaskTestSupport
import CipherCask
import Foundation

// Models, stores and recorders shared by the collection tests.

/// A counter with an `Int` id: the shape of concurrent `update` tests and the model test.
struct Counter: Codable, Identifiable, Sendable, Equatable, Hashable {
  var id: Int
  var value: Int
  var label: String = ""
}

/// A tag with a `UUID` id.
struct Tag: Codable, Identifiable, Sendable, Equatable {
  var id: UUID
  var name: String
}

/// A reading whose `value` can be NaN, which `JSONEncoder` refuses: an object that fails to encode.
struct Reading: Codable, Identifiable, Sendable, Equatable {
  var id: String
  var value: Double
}

/// Four of the Core Data events example's events with dates in 2025 and 2026, in memory.
func sampleEvents() -> [Event] {
  func event(_ id: String, _ city: String, _ venue: String, _ date: String) -> Event {
    Event(
      title: "Event \(id)", date: ISO8601DateFormatter().date(from: date)!, venue: venue, city: city, country: "NL",
      attendees: ["ann"], fbUrl: URL(string: "https://example.com/fb/\(id)"),
      ticketUrl: URL(string: "https://example.com/t/\(id)"), eventId: id)
  }
  return [
    event("a1", "Amsterdam", "Hall A", "2025-06-01T18:00:00Z"),
    event("a2", "Utrecht", "Loft", "2026-02-01T18:00:00Z"),
    event("a3", "Amsterdam", "Hall B", "2026-05-01T18:00:00Z"),
    event("a4", "Rotterdam", "Hall A", "2026-07-01T18:00:00Z"),
  ]
}

/// Runs `body` with a fresh store (durability `.never`) in a temporary directory; closes the
/// store and removes the directory afterwards (`CaskTestSupport`'s `withStore`, for bodies that
/// need no path).
func withStore<R>(_ label: String = "collections", _ body: (CaskStore) throws -> R) throws -> R {
  try withStore(label: label) { store, _ in try body(store) }
}

/// The `async` version of `withStore`.
func withStore<R>(
  _ label: String = "collections", _ body: (CaskStore) async throws -> R
) async throws -> R {
  try await withStore(label: label) { store, _ in try await body(store) }
}

/// Records every commit of a store, synchronously (observers run before the write returns), so
/// a test can count commits and see what each one changed.
final class CommitLog: Sendable {
  private let recorded = Locked<[[CaskChange]]>([])
  private let observation = Locked<CaskObservation?>(nil)

  init(_ store: CaskStore) {
    let observation = store.observeChanges { [weak self] changes in self?.recorded.withLock { $0.append(changes) } }
    self.observation.withLock { $0 = observation }
  }

  /// Every commit so far, each with the keys it changed.
  var commits: [[CaskChange]] { recorded.withLock { $0 } }

  /// Forgets the commits so far.
  func reset() { recorded.withLock { $0.removeAll() } }
}

/// Collects the elements of a change stream on a task of its own, so a test can wait for them
/// with a timeout instead of hanging on an element that never comes.
final class ChangeCollector<ID: Sendable>: Sendable {
  private let received = Locked<[CollectionChange<ID>]>([])
  private let finished = Locked(false)
  private let task = Locked<Task<Void, Never>?>(nil)

  init(_ stream: AsyncStream<CollectionChange<ID>>) {
    let task = Task {
      for await change in stream { self.received.withLock { $0.append(change) } }
      self.finished.withLock { $0 = true }
    }
    self.task.withLock { $0 = task }
  }

  /// What arrived so far.
  var changes: [CollectionChange<ID>] { received.withLock { $0 } }

  /// Whether the stream's loop has ended.
  var hasFinished: Bool { finished.withLock { $0 } }

  /// Waits until `count` elements arrived, or `seconds` passed.
  ///
  /// - Returns: what arrived.
  func wait(for count: Int, seconds: Double = 10) async -> [CollectionChange<ID>] {
    await waitUntil(seconds: seconds) { self.changes.count >= count }
    return changes
  }

  /// Cancels the consuming task and waits for its loop to end.
  func cancel() async {
    let task = self.task.withLock { $0 }
    task?.cancel()
    await task?.value
  }
}

/// Polls `condition` every millisecond until it holds or `seconds` passed.
func waitUntil(seconds: Double, _ condition: () -> Bool) async {
  let deadline = Date().addingTimeInterval(seconds)
  while !condition() && Date() < deadline {
    try? await Task.sleep(nanoseconds: 1_000_000)
  }
}

/// The keys a commit touched in `collection`, by kind, with the collection prefix removed.
func ids(in commit: [CaskChange], collection: String, kind: CaskChange.Kind) -> [String] {
  let prefix = collection + "\u{0}"
  return commit.filter { $0.kind == kind && $0.key.hasPrefix(prefix) }.map { String($0.key.dropFirst(prefix.count)) }
    .sorted()
}

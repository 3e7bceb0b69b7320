import CaskTestSupport
import Foundation
import Testing

@testable import CipherCaskSync

/// `SyncSerializer`: a sync call cancelled while it waits for its turn (behind a long
/// `pushPending`, say) used to wait for that turn anyway and only then end with `.cancelled`.
@Suite("A sync call cancelled while it waits for its turn")
struct SyncTurnCancellationTests {
  /// What the turns' bodies did, in order.
  final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [String] = []
    func append(_ entry: String) { lock.withLock { entries.append(entry) } }
    var all: [String] { lock.withLock { entries } }
  }

  private static func isCancelled<R>(_ result: Result<R, any Error>) -> Bool {
    guard case .failure(let error) = result, case SyncError.cancelled = error else { return false }
    return true
  }

  @Test("leaves the line at once with SyncError.cancelled, without running; the callers behind it keep their turns")
  func cancelledWhileWaiting() async throws {
    let serializer = SyncSerializer()
    let log = Log()
    let (gate, opener) = AsyncStream<Void>.makeStream()
    let first = Task {
      try await serializer.run {
        log.append("first started")
        for await _ in gate { break }
        log.append("first ended")
      }
    }
    try #require(try await eventually { log.all == ["first started"] })
    let secondEnded = Log()
    let second = Task {
      defer { secondEnded.append("ended") }
      try await serializer.run { log.append("second") }
    }
    let third = Task { try await serializer.run { log.append("third") } }
    try #require(try await eventually { serializer.waitingCount == 2 })
    second.cancel()
    // Had the cancelled call kept waiting (as it used to), it would end only after the first;
    // so the first is let go after a generous wait, to end the test rather than hang it.
    try await eventually(timeout: 60) { !secondEnded.all.isEmpty }
    #expect(secondEnded.all == ["ended"], "the cancelled call still waits for its turn")
    #expect(log.all == ["first started"], "the cancelled call ended while the first still held the turn")
    #expect(serializer.waitingCount == 1)
    opener.yield()
    let secondResult = await second.result
    #expect(Self.isCancelled(secondResult), "\(secondResult)")
    try await first.value
    try await third.value
    #expect(log.all == ["first started", "first ended", "third"])
    try await serializer.run { log.append("after") }
    #expect(log.all.last == "after", "the turn is free again")
  }

  @Test("a task cancelled before it asks for a turn does not run, even with the turn free")
  func cancelledBeforeAsking() async throws {
    let serializer = SyncSerializer()
    let log = Log()
    let task = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      try await serializer.run { log.append("ran") }
    }
    let result = await task.result
    #expect(Self.isCancelled(result), "\(result)")
    #expect(log.all.isEmpty)
    try await serializer.run { log.append("next") }
    #expect(log.all == ["next"], "the turn was not kept by the cancelled caller")
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The outbox against pulls, direct calls and itself: a change the server accepted is what the
/// device keeps, a conflict is noticed, and an older change is never sent after a newer one.
@Suite("The outbox against pulls, direct calls and overlapping runs")
struct OutboxOrderingTests {
  /// The pull between `deleteAndQueue` and `pushPending` brought the object back; the server
  /// accepted the delete, and the queue entry and sync record went, but the object stayed on
  /// the device, where a later `saveAndQueue` would have POSTed it back to life.
  @Test("a queued delete accepted by the server removes the copy a pull brought back")
  func acceptedDeleteRemovesPulledCopy() async throws {
    let fixture = try SyncFixture("rev-delete")
    defer { fixture.close() }
    let sync = fixture.remote()
    _ = try await sync.pullAll()
    try await sync.deleteAndQueue(id: "u1")
    _ = try await sync.pullAll()
    #expect(try await fixture.users.contains(id: "u1"), "the pull shows the server's version until the delete goes")
    #expect(try await sync.pushPending() == 1)
    #expect(try await fixture.server.log() == ["DELETE u1"])
    #expect(try await fixture.users.contains(id: "u1") == false)
    #expect(try sync.metadata.entry(for: "u1") == nil)
  }

  /// A queued save answered with an empty 2xx (the `/files` route answers PUT with 204) left
  /// the older copy a pull had stored, while the server held the version sent.
  @Test("a queued save answered with no body stores the version sent, not an older pulled copy")
  func emptyAnswerStoresSentVersion() async throws {
    let fixture = try SyncFixture("rev-204")
    defer { fixture.close() }
    try await fixture.server.put(
      file: "f1", #"{"result": {"id": "f1", "email": "f@example.com", "first": "Old", "last": "F", "address": null}}"#)
    let sync = RemoteCollection(
      fixture.users, baseURL: fixture.server.url("/files"),
      configuration: RemoteConfiguration(
        envelope: .key("result"), timeout: 10,
        prepareRequest: { $0.setValue("Bearer \(RESTServer.token)", forHTTPHeaderField: "Authorization") }))
    var user = try await sync.pull(id: "f1")
    user.first = "New"
    try await sync.saveAndQueue(user)
    _ = try await sync.pull(id: "f1")
    #expect(try await fixture.users.get(id: "f1")?.first == "Old", "the pull shows the server's version")
    #expect(try await sync.pushPending() == 1)
    let (status, body) = try await fixture.server.request("GET", "/files/f1")
    #expect(status == 200 && String(decoding: body, as: UTF8.self).contains("New"), "the server holds the save")
    #expect(try await fixture.users.get(id: "f1") == user)
  }

  /// `pullAll` recorded no ETag for every object it stored, including one with a queued save:
  /// that save then went out without `If-Match` and overwrote another writer's newer version.
  @Test("pullAll keeps the ETag a queued change was made against, so the change still meets its conflict")
  func pullAllKeepsQueuedChangesETag() async throws {
    let fixture = try SyncFixture("rev-etag")
    defer { fixture.close() }
    let sync = fixture.remote()
    var user = try await sync.pull(id: "u1")
    user.first = "Local"
    try await sync.saveAndQueue(user)
    let (status, _) = try await fixture.server.request(
      "PUT", "/admin/users/u1", json: ["id": "u1", "email": "x", "first": "Other", "last": "Writer"])
    #expect(status == 200)
    _ = try await sync.pullAll()
    do {
      try await sync.pushPending()
      Issue.record("the queued save overwrote the other writer's version")
    } catch SyncError.conflict(let id, _, _) {
      #expect(id == "u1")
    }
    #expect(sync.pendingCount == 1)
    #expect(try await fixture.server.log() == [])
    #expect(try sync.metadata.entry(for: "u1")?.etag == "\"v1\"")
  }

  /// `push` and `delete(id:)` skipped the queue: the older queued change went out after the
  /// newer direct one and undid it (or brought a deleted object back).
  @Test("push and delete(id:) of an object with queued changes are refused; nothing is sent")
  func directCallsWaitForTheQueue() async throws {
    let fixture = try SyncFixture("rev-direct")
    defer { fixture.close() }
    let sync = fixture.remote()
    var user = try await sync.pull(id: "u1")
    user.first = "Queued"
    try await sync.saveAndQueue(user)
    user.first = "Direct"
    let direct = user
    await #expect(throws: SyncError.pendingChanges(id: "u1")) { try await sync.push(direct) }
    await #expect(throws: SyncError.pendingChanges(id: "u1")) { try await sync.delete(id: "u1") }
    #expect(try await fixture.server.log() == [])
    #expect(try await fixture.users.get(id: "u1")?.first == "Queued")
    // Once the queue is sent, direct calls go through again.
    #expect(try await sync.pushPending() == 1)
    #expect(try await sync.push(direct).first == "Direct")
    #expect(try await fixture.server.log() == ["PUT u1", "PUT u1"])
  }

  /// Two `pushPending` runs at once: the first, held before its request, sent a change the
  /// second had already sent (the server replayed its first answer), and stored that older
  /// answer and ETag over the second run's newer ones.
  @Test("two overlapping pushPending runs end with the newest answer and ETag stored")
  func overlappingPushesKeepNewestAnswer() async throws {
    let fixture = try SyncFixture("rev-overlap")
    defer { fixture.close() }
    let sync = fixture.remote()
    var user = try await sync.pull(id: "u1")
    user.first = "A"
    try await sync.saveAndQueue(user)
    let gate = Gate()
    let first = Task { try await sync.pushPending(adjust: { _ in gate.holdOnce() }) }
    try #require(try await eventually { gate.isHolding }, "the first run never reached its request")
    user.first = "B"
    try await sync.saveAndQueue(user)
    let second = Task {
      defer { gate.markSecondDone() }
      return try await sync.pushPending()
    }
    // The second run either ends meanwhile (it did, before the fix) or waits for the first.
    for _ in 0..<100 where !gate.secondDone { try await Task.sleep(for: .milliseconds(20)) }
    gate.release()
    _ = try await first.value
    _ = try await second.value
    #expect(sync.pendingCount == 0)
    #expect(try await fixture.users.get(id: "u1")?.first == "B")
    #expect(try sync.metadata.entry(for: "u1")?.etag == "\"v3\"")
    #expect(try await fixture.server.log() == ["PUT u1", "PUT u1"])
  }

}

/// Holds the first `adjust` call of a push until released (a pthread-blocking wait: the
/// hook is synchronous), and records when the other run has ended.
///
/// The wait gives up after 30 s. Prevents: the hook, which runs on a thread of the concurrency
/// pool, holding that thread for good when the task that would release it cannot get a
/// thread (two on this machine), which stops every test in the process.
private final class Gate: @unchecked Sendable {
  private let lock = NSLock()
  private let released = DispatchSemaphore(value: 0)
  private var held = false
  private var done = false

  var isHolding: Bool {
    lock.lock()
    defer { lock.unlock() }
    return held
  }

  var secondDone: Bool {
    lock.lock()
    defer { lock.unlock() }
    return done
  }

  func markSecondDone() {
    lock.lock()
    done = true
    lock.unlock()
  }

  func holdOnce() {
    lock.lock()
    let first = !held
    held = true
    lock.unlock()
    if first { _ = released.wait(timeout: .now() + 30) }
  }

  func release() { released.signal() }
}

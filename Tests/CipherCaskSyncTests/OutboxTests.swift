import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("The outbox")
struct OutboxTests {
  @Test("queued changes survive a crash mid-push and reach the server once each, in order")
  func crashMidPush() async throws {
    let server = try RESTServer()
    defer { server.stop() }
    try await withTemporaryDirectory("outbox") { directory async throws in
      let path = directory.file("s.cask")
      var store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      var users = store.collection(User.self)
      var sync = SyncFixture.remote(users, server)
      let a = User(id: "a", email: "a@example.com", first: "A", last: "One", address: nil)
      var b = User(id: "b", email: "b@example.com", first: "B", last: "Two", address: nil)
      try await sync.saveAndQueue(a)
      try await sync.saveAndQueue(b)
      b.last = "Three"
      try await sync.saveAndQueue(b)
      try await sync.deleteAndQueue(id: "a")
      #expect(sync.pendingCount == 4)
      #expect(try await users.get(id: "b")?.last == "Three")
      #expect(try await users.contains(id: "a") == false)

      // The second change is applied by the server, but its answer never arrives.
      let counter = RequestCounter()
      do {
        try await sync.pushPending(adjust: { request in
          if counter.next() == 2 { request.setValue("1", forHTTPHeaderField: "X-Drop-Response") }
        })
        Issue.record("expected the dropped answer to fail the push")
      } catch let error as SyncError {
        guard case .transport = error else { throw error }
      }
      #expect(sync.pendingCount == 3)

      // The process dies: reopen the store and push again.
      try store.close()
      store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      users = store.collection(User.self)
      sync = SyncFixture.remote(users, server)
      #expect(sync.pendingCount == 3)
      #expect(try await sync.pushPending() == 3)
      #expect(sync.pendingCount == 0)
      #expect(try await server.log() == ["POST a", "POST b", "PUT b", "DELETE a"])
      let (status, body) = try await server.request("GET", "/users/b")
      #expect(status == 200)
      #expect(String(decoding: body, as: UTF8.self).contains("Three"))
      try store.close()
    }
  }

  @Test("a conflict keeps the queued change and stops the queue")
  func conflictKeepsChange() async throws {
    let fixture = try SyncFixture("outbox-conflict")
    defer { fixture.close() }
    let (server, users) = (fixture.server, fixture.users)
    let sync = SyncFixture.remote(users, server)
    var user = try await sync.pull(id: "u1")
    _ = try await server.request("PUT", "/admin/users/u1", json: ["id": "u1", "email": "x", "first": "X", "last": "Y"])
    user.first = "Local"
    try await sync.saveAndQueue(user)
    await #expect(throws: SyncError.self) { try await sync.pushPending() }
    #expect(sync.pendingCount == 1)
    #expect(try await users.get(id: "u1")?.first == "Local")
  }
}

/// Counts requests across the concurrent closure calls of one push.
final class RequestCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0

  func next() -> Int {
    lock.lock()
    defer { lock.unlock() }
    count += 1
    return count
  }
}

@Suite("Outbox housekeeping")
struct OutboxHousekeepingTests {
  @Test("pendingChanges lists the queue in order and discardPending drops one change")
  func listAndDiscard() async throws {
    let fixture = try SyncFixture("outbox-list")
    defer { fixture.close() }
    let (server, users) = (fixture.server, fixture.users)
    let sync = SyncFixture.remote(users, server)
    try await sync.saveAndQueue(User(id: "x", email: "x@example.com", first: "X", last: "X", address: nil))
    try await sync.deleteAndQueue(id: "gone")
    let pending = try await sync.pendingChanges()
    #expect(pending.map(\.id) == ["x", "gone"])
    #expect(pending.map(\.isDelete) == [false, true])
    #expect(try await sync.discardPending(change: pending[0].change))
    #expect(try await sync.discardPending(change: pending[0].change) == false)
    #expect(sync.pendingCount == 1)
    #expect(try await users.contains(id: "x"))
    #expect(try await sync.pushPending() == 1)
    #expect(try await server.log() == [])
  }
}

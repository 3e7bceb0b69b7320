import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The outbox's bookkeeping (a tail sequence number and a count of queued changes per object,
/// OutboxIndex.swift) must keep every guarantee of the queue it replaced the scans of: order,
/// exactly once at the server across a lost answer and a reopen, the local copy kept while a
/// later change to it waits, and queues written before the bookkeeping existed.
@Suite("A backlog in the outbox reaches the server in order, each change once")
struct OutboxBacklogTests {
  /// Changes in the backlog test: 2,000 by default, `CIPHERCASK_OUTBOX_BACKLOG` for another.
  static let backlog = max(
    8, ProcessInfo.processInfo.environment["CIPHERCASK_OUTBOX_BACKLOG"].flatMap { Int($0) } ?? 2_000)

  private static func user(_ id: String, revision: Int) -> User {
    User(id: id, email: "\(id)@example.com", first: id, last: "rev\(revision)", address: nil)
  }

  @Test(
    "thousands of queued saves and deletes, with a lost answer and a reopen midway, reach the server once each, in order"
  )
  func backlogReachesServerOnceInOrder() async throws {
    let server = try RESTServer()
    defer { server.stop() }
    try await withTemporaryDirectory("outbox-backlog") { directory async throws in
      let path = directory.file("s.cask")
      var store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      var sync = SyncFixture.remote(store.collection(User.self), server)

      // Four passes over backlog/4 objects: create, update twice, then delete every third
      // object and update the others.
      let objects = Self.backlog / 4
      var expected: [String] = []
      for index in 0..<(objects * 4) {
        let (pass, id) = (index / objects, "o\(index % objects)")
        if pass == 3 && (index % objects) % 3 == 0 {
          try await sync.deleteAndQueue(id: id)
          expected.append("DELETE \(id)")
        } else {
          try await sync.saveAndQueue(Self.user(id, revision: pass))
          expected.append("\(pass == 0 ? "POST" : "PUT") \(id)")
        }
      }
      #expect(sync.pendingCount == expected.count)

      // Midway, the server applies a change but its answer is lost; then the process dies.
      let counter = RequestCounter()
      let lost = expected.count / 2
      await #expect(throws: SyncError.self) {
        try await sync.pushPending(adjust: { request in
          if counter.next() == lost { request.setValue("1", forHTTPHeaderField: "X-Drop-Response") }
        })
      }
      #expect(sync.pendingCount == expected.count - lost + 1)
      try store.close()
      store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      sync = SyncFixture.remote(store.collection(User.self), server)
      #expect(try await sync.pushPending() == expected.count - lost + 1)

      #expect(sync.pendingCount == 0)
      let log = try await server.log()
      #expect(log.count == expected.count)
      #expect(log == expected)
      let users = store.collection(User.self)
      for number in 0..<objects {
        let local = try await users.get(id: "o\(number)")
        #expect(number % 3 == 0 ? local == nil : local?.last == "rev3", "o\(number)")
      }
      // Nothing is left of the bookkeeping but the tail's sequence number.
      #expect(store.count(inGroup: "__outbox-index:User") == 1)
      try store.close()
    }
  }

  @Test("while a later change to an object waits, the answer to an earlier one does not replace the local copy")
  func laterChangeKeepsLocalCopy() async throws {
    let fixture = try SyncFixture("outbox-later")
    defer { fixture.close() }
    let (server, store, users) = (fixture.server, fixture.store, fixture.users)
    let sync = SyncFixture.remote(users, server)
    try await sync.saveAndQueue(Self.user("a", revision: 1))
    try await sync.saveAndQueue(Self.user("a", revision: 2))
    // The server answers the first change with its own version of the object (the body is
    // rewritten on the way); the second change is refused (a bad token), so it stays queued.
    let counter = RequestCounter()
    await #expect(throws: SyncError.self) {
      try await sync.pushPending(adjust: { request in
        if counter.next() == 1 {
          request.httpBody = try? JSONEncoder().encode(Self.user("a", revision: 100))
        } else {
          request.setValue("Bearer wrong", forHTTPHeaderField: "Authorization")
        }
      })
    }
    #expect(sync.pendingCount == 1)
    #expect(try await users.get(id: "a")?.last == "rev2")

    // Discarding the later change leaves no change to "a" queued: the next answer is stored.
    try await sync.saveAndQueue(Self.user("a", revision: 3))
    let pending = try await sync.pendingChanges()
    #expect(pending.count == 2)
    #expect(try await sync.discardPending(change: pending[1].change))
    #expect(
      try await sync.pushPending(adjust: { request in
        request.httpBody = try? JSONEncoder().encode(Self.user("a", revision: 200))
      }) == 1)
    #expect(try await users.get(id: "a")?.last == "rev200")
    #expect(store.count(inGroup: "__outbox-index:User") == 1)
  }

  @Test("a queue written before the outbox kept its index is continued in order and sent once each")
  func queueWithoutIndexIsContinued() async throws {
    let fixture = try SyncFixture("outbox-legacy")
    defer { fixture.close() }
    let (server, store, users) = (fixture.server, fixture.store, fixture.users)
    // The layout of the first outbox: the changes only, keyed by 20-digit sequence numbers.
    let old: [(OutboxEntry.Operation, User)] = [
      (.save, Self.user("a", revision: 1)), (.save, Self.user("a", revision: 2)), (.save, Self.user("b", revision: 1)),
    ]
    try store.batch { batch in
      for (number, (operation, user)) in old.enumerated() {
        let entry = OutboxEntry(
          change: UUID().uuidString, operation: operation, id: user.id, body: try JSONEncoder().encode(user))
        let digits = String(number + 1)
        let key = "__outbox:User\u{0}" + String(repeating: "0", count: 20 - digits.count) + digits
        try batch.put(try JSONEncoder().encode(entry), forKey: key)
        try batch.save(user, in: users)
      }
    }
    let sync = SyncFixture.remote(users, server)
    #expect(sync.pendingCount == 3)
    try await sync.saveAndQueue(Self.user("c", revision: 1))
    try await sync.deleteAndQueue(id: "a")
    #expect(try await sync.pendingChanges().map(\.id) == ["a", "a", "b", "c", "a"])
    #expect(try await sync.pushPending() == 5)
    #expect(try await server.log() == ["POST a", "PUT a", "POST b", "POST c", "DELETE a"])
    #expect(try await users.contains(id: "a") == false)
    #expect(try await users.get(id: "b")?.last == "rev1")
    #expect(sync.pendingCount == 0)
    #expect(store.count(inGroup: "__outbox-index:User") == 1)
  }
}

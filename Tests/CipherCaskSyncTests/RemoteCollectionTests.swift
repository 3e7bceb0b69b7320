import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("Remote collections against a real HTTP server")
struct RemoteCollectionTests {
  @Test("pullAll follows next links and upserts every page in one batch")
  func pullAllPages() async throws {
    let fixture = try SyncFixture()
    defer { fixture.close() }
    let pages = ProgressLog()
    let result = try await fixture.remote().pullAll(progress: { pages.add($0) })
    #expect(result == .init(inserted: 5, replaced: 0))
    #expect(fixture.users.count == 5)
    #expect(try await fixture.users.get(id: "u3")?.address?.zip == "62703")
    #expect(pages.values.map(\.objects) == [2, 4, 5])
    let again = try await fixture.remote(pagination: .page(parameter: "page", first: 1)).pullAll()
    #expect(again == .init(inserted: 0, replaced: 5))
  }

  @Test("a wrong token is an HTTP 401, the store is unchanged, and the token is not in the error")
  func unauthorized() async throws {
    let fixture = try SyncFixture()
    defer { fixture.close() }
    do {
      _ = try await fixture.remote(token: "wrong-secret-token").pullAll()
      Issue.record("expected a 401")
    } catch let error as SyncError {
      guard case .http(401, _) = error else { throw error }
      #expect(!String(describing: error).contains("wrong-secret-token"))
    }
    #expect(fixture.store.count == 0)
  }

  @Test("pull(id:) upserts one object; a 404 changes nothing")
  func pullOne() async throws {
    let fixture = try SyncFixture()
    defer { fixture.close() }
    let user = try await fixture.remote().pull(id: "u2")
    #expect(user.first == "First2")
    #expect(try await fixture.users.get(id: "u2") == user)
    await #expect(throws: SyncError.http(status: 404, body: "{\"error\": \"not found\"}")) {
      try await fixture.remote().pull(id: "nobody")
    }
    #expect(fixture.users.count == 1)
  }

  @Test("push POSTs a new object, PUTs a known one, and a stale ETag is a conflict with both versions")
  func pushAndConflict() async throws {
    let fixture = try SyncFixture()
    defer { fixture.close() }
    let remote = fixture.remote()
    var user = User(id: "n1", email: "n1@example.com", first: "New", last: "One", address: nil)
    try await remote.push(user)
    user.last = "Changed"
    try await remote.push(user)
    #expect(try await fixture.server.log() == ["POST n1", "PUT n1"])
    // Someone else changes it on the server: our ETag is now stale.
    var theirs = user
    theirs.email = "theirs@example.com"
    _ = try await fixture.server.request(
      "PUT", "/admin/users/n1", json: try JSONSerialization.jsonObject(with: JSONEncoder().encode(theirs)))
    user.first = "Mine"
    do {
      try await remote.push(user)
      Issue.record("expected a conflict")
    } catch SyncError.conflict(let id, let local, let remoteVersion) {
      #expect(id == "n1")
      #expect(local.flatMap { try? JSONDecoder().decode(User.self, from: $0) } == user)
      #expect(String(decoding: remoteVersion ?? Data(), as: UTF8.self).contains("theirs@example.com"))
    }
    #expect(try await fixture.users.get(id: "n1")?.first == "New")
  }

  @Test("delete(id:) deletes remotely, then locally")
  func deleteRemote() async throws {
    let fixture = try SyncFixture()
    defer { fixture.close() }
    let remote = fixture.remote()
    _ = try await remote.pullAll()
    #expect(try await remote.delete(id: "u1"))
    #expect(try await fixture.users.contains(id: "u1") == false)
    #expect(try await fixture.server.log() == ["DELETE u1"])
  }

  @Test("error answers: 500 with a short body excerpt, malformed JSON, a server that dies mid-answer")
  func errorAnswers() async throws {
    let fixture = try SyncFixture()
    defer { fixture.close() }
    let broken = RemoteCollection(
      fixture.users, baseURL: fixture.server.url("/status/500"),
      configuration: RemoteConfiguration(envelope: .key("result")))
    do {
      _ = try await broken.pullAll()
      Issue.record("expected an HTTP error")
    } catch SyncError.http(let status, let body) {
      #expect(status == 500)
      #expect(body.count <= 201)
    }
    let bad = RemoteCollection(
      fixture.users, baseURL: fixture.server.url("/bad"), configuration: RemoteConfiguration(envelope: .key("result")))
    await #expect(throws: SyncError.decoding("the body is not JSON")) { try await bad.pullAll() }
    let dying = RemoteCollection(
      fixture.users, baseURL: fixture.server.url("/die"), configuration: RemoteConfiguration(envelope: .key("result")))
    do {
      _ = try await dying.pullAll()
      Issue.record("expected a failure")
    } catch let error as SyncError {
      switch error {
      case .transport, .decoding: break
      default: Issue.record("unexpected \(error)")
      }
    }
    #expect(fixture.store.count == 0)
  }

  @Test("a slow answer times out, and cancelling a call ends it")
  func timeoutAndCancellation() async throws {
    let fixture = try SyncFixture()
    defer { fixture.close() }
    let slow = RemoteCollection(
      fixture.users, baseURL: fixture.server.url("/slow"),
      configuration: RemoteConfiguration(envelope: .key("result"), timeout: 0.5))
    await #expect(throws: SyncError.self) { try await slow.pullAll() }
    let patient = RemoteCollection(
      fixture.users, baseURL: fixture.server.url("/slow"),
      configuration: RemoteConfiguration(envelope: .key("result"), timeout: 30))
    let asked = try await fixture.server.authorizations().count
    let task = Task { try await patient.pullAll() }
    // Cancelled while its request waits for the answer: once the server has it.
    let arrived = try await eventually { try await fixture.server.authorizations().count > asked }
    #expect(arrived, "the request never reached the server")
    task.cancel()
    let result = await task.result
    // A call that waited for the server's answer (after 60 s) would have stored its objects.
    // (No wall-clock bound: CI's sanitizer run once starved the cooperative pool for 116 s.)
    #expect(throws: SyncError.cancelled) { try result.get() }
    #expect(fixture.store.count == 0)
  }

  @Test("pull(id:) refuses an answer whose id is only canonically equivalent, not stored under another key")
  func pullAnswerWithEquivalentIdIsRefused() async throws {
    let fixture = try SyncFixture("nfd")
    defer { fixture.close() }
    let sync = fixture.remote()
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"
    // The server keeps the object at /users/caf%C3%A9 but spells its id decomposed.
    let (status, _) = try await fixture.server.request(
      "PUT", "/admin/users/caf%C3%A9",
      json: ["id": decomposed, "email": "c@example.com", "first": "C", "last": "Afe"])
    #expect(status == 200)
    _ = try? await sync.pull(id: composed)
    // Either refused (nothing stored), or stored where `get(id: composed)` finds it.
    let found = try await fixture.users.get(id: composed)
    #expect(fixture.users.count == 0 || found != nil)
  }
}

/// Collects progress reports from a callback.
final class ProgressLog: @unchecked Sendable {
  private let lock = NSLock()
  private var items: [SyncProgress] = []

  func add(_ progress: SyncProgress) {
    lock.lock()
    items.append(progress)
    lock.unlock()
  }

  var values: [SyncProgress] {
    lock.lock()
    defer { lock.unlock() }
    return items
  }
}

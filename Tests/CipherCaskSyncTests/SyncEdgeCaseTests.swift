import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Defects found in review of the sync layer (session 5), each pinned by the failure it caused.
@Suite("Sync at the edges: dot-segment ids, equivalent ids, the last page number")
struct SyncEdgeCaseTests {
  @Test("a queued delete of the id '..' is not dropped as done while the server keeps the object")
  func dotDotIdDeleteIsNotLost() async throws {
    let fixture = try SyncFixture("dotdot")
    defer { fixture.close() }
    let sync = fixture.remote()
    let odd = User(id: "..", email: "dots@example.com", first: "Dot", last: "Dot", address: nil)
    try await sync.saveAndQueue(odd)
    #expect(try await sync.pushPending() == 1)  // POST /users, body id ".."
    #expect(try await fixture.server.log() == ["POST .."])

    try await sync.deleteAndQueue(id: "..")
    // `baseURL/..` is the parent of the resource once the dot segment is resolved: the
    // server answers 404, which the outbox takes for "already deleted".
    _ = try? await sync.pushPending()
    let deletedRemotely = try await fixture.server.log().contains("DELETE ..")
    #expect(deletedRemotely || sync.pendingCount == 1, "the delete left the queue but never reached the object")
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

  @Test("paging from the largest page number ends at its empty page instead of trapping on overflow")
  func lastPageNumber() async throws {
    let fixture = try SyncFixture("last-page")
    defer { fixture.close() }
    // The test server has no object on such a page: the pull ends there. It used to count on
    // to the next page number first, past Int.max.
    for first in [Int.max, Int.max - 1] {
      let result = try await fixture.remote(pagination: .page(parameter: "page", first: first)).pullAll()
      #expect(result == .init(inserted: 0, replaced: 0))
    }
  }

  @Test("a next link is followed only on the server the walk started on")
  func pageLinksStayOnTheServer() throws {
    let first = try #require(URL(string: "http://127.0.0.1:8080/users?page=1"))
    let page = try #require(URL(string: "http://127.0.0.1:8080/users?page=3"))
    let same = ["/users?page=4", "?page=4", "http://127.0.0.1:8080/other", "HTTP://127.0.0.1:8080/users"]
    for link in same {
      #expect(try PageLink.resolve(link, on: page, walkStartedAt: first) != nil, "\(link)")
    }
    let defaultPort = try #require(URL(string: "https://api.example.com/users"))
    #expect(
      try PageLink.resolve("https://API.example.com:443/users?p=2", on: defaultPort, walkStartedAt: defaultPort) != nil)
    let elsewhere = [
      "http://127.0.0.1:8081/users", "https://127.0.0.1:8080/users", "http://localhost:8080/users",
      "//evil.example/users", "http://evil.example/users?page=2",
    ]
    for link in elsewhere {
      #expect(throws: PageLink.LeavesServer.self, "\(link)") {
        try PageLink.resolve(link, on: page, walkStartedAt: first)
      }
    }
  }

  @Test("pullAll refuses a next link to another server, sends it no request, and stores nothing")
  func nextLinkToAnotherServer() async throws {
    let fixture = try SyncFixture("next-elsewhere")
    defer { fixture.close() }
    // Port 1: were the link followed, the call would fail with a transport error instead.
    try await fixture.server.put(
      file: "first",
      #"{"result": [{"id": "x1", "email": "x@example.com", "first": "X", "last": "Y", "address": null}], "#
        + #""next": "http://127.0.0.1:1/users?page=2"}"#)
    let remote = RemoteCollection(
      fixture.users, baseURL: fixture.server.url("/files/first"),
      configuration: RemoteConfiguration(
        envelope: .key("result"), pagination: .nextURL(key: "next"),
        prepareRequest: { $0.setValue("Bearer \(RESTServer.token)", forHTTPHeaderField: "Authorization") }))
    let before = fixture.users.count
    do {
      _ = try await remote.pullAll()
      Issue.record("pullAll followed a link to another server")
    } catch SyncError.decoding(let reason) {
      #expect(reason.contains("another server"), "\(reason)")
    }
    #expect(fixture.users.count == before)
  }

  /// Found in review (session 6): `HTTP://` failed with "URL error -1002", though schemes
  /// are case-insensitive and `cask` took the argument as a URL.
  @Test("an upper-case scheme is a URL like any other")
  func upperCaseScheme() async throws {
    let fixture = try SyncFixture("upper-scheme")
    defer { fixture.close() }
    let source = RemoteJSONSource(
      configuration: RemoteConfiguration(
        prepareRequest: { $0.setValue("Bearer \(RESTServer.token)", forHTTPHeaderField: "Authorization") }))
    let body = try await source.get(URL(string: "HTTP://127.0.0.1:\(fixture.server.port)/users")!)
    let page = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    #expect((page["result"] as? [Any])?.count == 2)
  }
}

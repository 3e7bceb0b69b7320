import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A walk over pages ends, and only where the server says the last page is: pages that never
/// end or wrap around stop it with an error, a `next` that is no link is not taken for the
/// last page, a link to another server is not followed, the last page number does not trap.
@Suite("Walking the pages of a resource")
struct PageWalkTests {
  /// `users` synced with `path` on `server`, in a `result` envelope, with the token.
  private func remote(
    _ fixture: SyncFixture, _ path: String, pagination: RemoteConfiguration.Pagination, maximumPages: Int = 10_000
  ) -> RemoteCollection<User> {
    var configuration = RemoteConfiguration(
      envelope: .key("result"), pagination: pagination, timeout: 10,
      prepareRequest: { $0.setValue("Bearer \(RESTServer.token)", forHTTPHeaderField: "Authorization") })
    configuration.maximumPages = maximumPages
    return RemoteCollection(fixture.users, baseURL: fixture.server.url(path), configuration: configuration)
  }

  /// How `pullAll()` ended: its result, or `SyncError.cancelled` when it had received more
  /// than `limit` objects and was cancelled then (a walk that would never end), with the
  /// objects it had received. The bound is on the objects, not on time, so a slow machine
  /// cannot make a walk that ends look like one that does not.
  private func pullAll(
    _ remote: RemoteCollection<User>, cancellingPast limit: Int
  ) async -> (result: Result<CaskCollection<User>.ImportResult, any Error>, received: Int) {
    let received = Counter()
    let canceller = Canceller()
    let walk = Task {
      try await remote.pullAll(progress: { progress in
        received.set(progress.objects)
        if progress.objects > limit { canceller.cancel() }
      })
    }
    canceller.set { walk.cancel() }
    if received.value > limit { walk.cancel() }
    let result = await walk.result
    return (result, received.value)
  }

  /// Pages 4, 5, 6, ... of `/pages/wrap` are pages 1, 2, 3 again, under new URLs: a server
  /// whose page numbers or cursors wrap around. No two pages in a row hold the same objects and
  /// no URL comes twice, so neither check ended the walk: `pullAll` requested pages until it
  /// was cancelled, holding every copy in memory.
  @Test(
    "pullAll ends with a decoding error when the pages start over, instead of walking them forever",
    arguments: [
      RemoteConfiguration.Pagination.nextURL(key: "next"),
      RemoteConfiguration.Pagination.page(parameter: "page", first: 1),
    ])
  func wrappingPagesEnd(pagination: RemoteConfiguration.Pagination) async throws {
    let fixture = try SyncFixture("wrap")
    defer { fixture.close() }
    let (result, received) = await pullAll(remote(fixture, "/pages/wrap", pagination: pagination), cancellingPast: 300)
    switch result {
    case .failure(SyncError.decoding(let reason)):
      #expect(reason.contains("already"), "\(reason)")
    case .failure(SyncError.cancelled):
      Issue.record("still walking pages that start over after \(received) objects (of 3) received")
    case .failure(let error):
      Issue.record("unexpected error: \(error)")
    case .success(let counts):
      Issue.record("the walk ended as complete: \(counts)")
    }
    #expect(fixture.users.count == 0)
  }

  /// `/pages/endless` has a next page with a new object, always: a hostile or broken server.
  /// There was no bound on the pages of a walk, nor on the memory they take (each page's
  /// objects are kept until the end), and the timeout is per request: the walk went on until
  /// cancelled. `RemoteConfiguration.maximumPages` bounds it now.
  @Test("pullAll of pages that never end stops at maximumPages with an error, writing nothing")
  func endlessPagesEnd() async throws {
    let fixture = try SyncFixture("endless")
    defer { fixture.close() }
    #expect(RemoteConfiguration().maximumPages == 10_000)
    let remote = remote(fixture, "/pages/endless", pagination: .nextURL(key: "next"), maximumPages: 25)
    let (result, received) = await pullAll(remote, cancellingPast: 250)
    switch result {
    case .failure(SyncError.decoding(let detail)):
      #expect(detail.contains("more than 25 pages") && detail.contains("maximumPages"), "\(detail)")
      #expect(received == 25, "it fetched exactly the pages allowed")
    case .failure(let error):
      Issue.record("unexpected error: \(error)")
    case .success(let counts):
      Issue.record("the walk ended as complete: \(counts)")
    }
    #expect(fixture.users.count == 0)
  }

  /// A `next` that is neither a string nor null (a page number, a HAL-style `{"href": ...}`),
  /// or a string that is not a URL, was read as "no next page": the walk ended after the
  /// first page and `pullAll` reported it complete, the other pages silently missing.
  @Test(
    "a next member that is no link is a decoding error, not the last page",
    arguments: [#"2"#, #"{"href": "/users?page=2"}"#, #"["/users?page=2"]"#, #"true"#, #""http://[::1""#])
  func nextThatIsNoLink(next: String) async throws {
    let fixture = try SyncFixture("next-no-link")
    defer { fixture.close() }
    try await fixture.server.put(
      file: "first",
      #"{"result": [{"id": "x1", "email": "x@example.com", "first": "X", "last": "Y", "address": null}], "#
        + #""next": \#(next)}"#)
    let remote = remote(fixture, "/files/first", pagination: .nextURL(key: "next"))
    do {
      let counts = try await remote.pullAll()
      Issue.record("the walk ended as complete after page 1: \(counts)")
    } catch SyncError.decoding(let reason) {
      #expect(reason.contains("next"), "\(reason)")
      #expect(!reason.contains("users?page"), "\(reason)")
    }
    #expect(fixture.users.count == 0)
  }

  @Test("a next member that is null, absent or empty still ends the walk")
  func nextThatEndsTheWalk() async throws {
    let fixture = try SyncFixture("next-end")
    defer { fixture.close() }
    for (name, tail) in [("null", #", "next": null"#), ("absent", ""), ("empty", #", "next": """#)] {
      try await fixture.server.put(
        file: name,
        #"{"result": [{"id": "\#(name)", "email": "x@example.com", "first": "X", "last": "Y", "address": null}]"#
          + tail + "}")
      let counts = try await remote(fixture, "/files/\(name)", pagination: .nextURL(key: "next")).pullAll()
      #expect(counts == .init(inserted: 1, replaced: 0), "\(name)")
    }
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
}

/// A number set from a `@Sendable` callback and read by the test.
private final class Counter: Sendable {
  private let state = Locked(0)
  var value: Int { state.withLock { $0 } }
  func set(_ value: Int) { state.withLock { $0 = value } }
}

/// Cancels a task from a `@Sendable` callback that runs before the task is known to it.
private final class Canceller: Sendable {
  private let action = Locked<(@Sendable () -> Void)?>(nil)

  func set(_ cancel: @escaping @Sendable () -> Void) { action.withLock { $0 = cancel } }
  func cancel() { action.withLock { $0 }?() }
}

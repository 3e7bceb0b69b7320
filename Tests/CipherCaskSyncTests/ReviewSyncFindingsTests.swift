import CaskTestSupport
import CipherCask
import Foundation
import Synchronization
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Defects found in a review of the sync layer: pages that never end, next links that end a
/// walk as if it were complete, and timeouts URLSession traps on.
@Suite("Sync review: endless and wrapping pages, next links that are no link, unbounded timeouts")
struct ReviewSyncFindingsTests {
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

  /// How `pullAll()` ended within `seconds`: its result, or `SyncError.cancelled` when it was
  /// still walking then (and was cancelled), with the objects it had received meanwhile.
  private func pullAll(
    _ remote: RemoteCollection<User>, within seconds: Int
  ) async -> (result: Result<CaskCollection<User>.ImportResult, any Error>, received: Int) {
    let received = Counter()
    let walk = Task { try await remote.pullAll(progress: { received.set($0.objects) }) }
    let watchdog = Task {
      try await Task.sleep(for: .seconds(seconds))
      walk.cancel()
    }
    let result = await walk.result
    watchdog.cancel()
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
    let (result, received) = await pullAll(remote(fixture, "/pages/wrap", pagination: pagination), within: 15)
    switch result {
    case .failure(SyncError.decoding(let reason)):
      #expect(reason.contains("already"), "\(reason)")
    case .failure(SyncError.cancelled):
      Issue.record("still walking pages that start over after 15 s, \(received) objects (of 3) received")
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
    let (result, received) = await pullAll(remote, within: 60)
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

  /// FoundationNetworking converts a request's timeout to milliseconds in an `Int`
  /// (`_HTTPURLProtocol.configureEasyHandle`), which traps for infinity, NaN or more than
  /// about 9.2e15 seconds: `timeout: .infinity`, a natural way to ask for no timeout, took the
  /// whole process down on the first request.
  @Test(
    "a timeout of infinity, or one too long for URLSession, means no timeout instead of a crash",
    arguments: [TimeInterval.infinity, 1e300])
  func unboundedTimeout(timeout: TimeInterval) async throws {
    let fixture = try SyncFixture("no-timeout")
    defer { fixture.close() }
    let remote = RemoteCollection(
      fixture.users, baseURL: fixture.server.url("/users"),
      configuration: RemoteConfiguration(
        envelope: .key("result"), pagination: .nextURL(key: "next"), timeout: timeout,
        prepareRequest: { $0.setValue("Bearer \(RESTServer.token)", forHTTPHeaderField: "Authorization") }))
    #expect(try await remote.pullAll() == .init(inserted: 5, replaced: 0))
    // The same through `adjust`, on a `RemoteJSONSource` and a session of the caller's.
    let source = RemoteJSONSource(
      configuration: RemoteConfiguration(
        timeout: 10,
        prepareRequest: { request in
          request.setValue("Bearer \(RESTServer.token)", forHTTPHeaderField: "Authorization")
          request.timeoutInterval = timeout
        }),
      session: URLSession(configuration: .ephemeral))
    #expect(try await !source.get(fixture.server.url("/users")).isEmpty)
  }
}

/// A number set from a `@Sendable` callback and read by the test.
private final class Counter: Sendable {
  private let state = Mutex(0)
  var value: Int { state.withLock { $0 } }
  func set(_ value: Int) { state.withLock { $0 = value } }
}

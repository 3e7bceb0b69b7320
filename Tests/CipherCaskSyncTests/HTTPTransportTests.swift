import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The requests under every sync call: a timeout of any size is taken (no trap in
/// FoundationNetworking), a completed request is released at once, and a URL's scheme is
/// case-insensitive.
@Suite("HTTP requests: timeouts, release, URL schemes")
struct HTTPTransportTests {

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
    // The same through `adjust`, on a `RemoteJSONSource` and a URLSession of the caller's.
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

  /// Every request's bookkeeping (its answer, body included, and its URLSession task) was held
  /// by a timer until the timeout fired: 30 s of page bodies by default, forever with
  /// `timeout: .infinity`.
  @Test("a completed request is released at once, not when its timeout would have fired")
  func completedCallIsReleased() async throws {
    let fixture = try SyncFixture("rev-release")
    defer { fixture.close() }
    let transport = HTTPTransport(configuration: RemoteConfiguration(timeout: 600), session: nil)
    let watch = WeakBox()
    var request = URLRequest(url: fixture.server.url("/users"))
    request.setValue("Bearer \(RESTServer.token)", forHTTPHeaderField: "Authorization")
    let response = try await transport.send(request, observe: { watch.set($0) })
    #expect(response.status == 200 && !response.body.isEmpty)
    // URLSession lets go of its completion handler on a queue of its own: wait for that.
    for _ in 0..<250 where watch.isAlive { try await Task.sleep(for: .milliseconds(20)) }
    #expect(!watch.isAlive, "the call (with its answer) is still held after 5 s")
  }

  /// Prevents `HTTP://` failing with "URL error -1002": schemes are case-insensitive, and
  /// `cask` takes the argument as a URL.
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

/// A weak reference set from a `@Sendable` callback.
private final class WeakBox: @unchecked Sendable {
  private let lock = NSLock()
  private weak var object: AnyObject?

  var isAlive: Bool {
    lock.lock()
    defer { lock.unlock() }
    return object != nil
  }

  func set(_ object: AnyObject) {
    lock.lock()
    self.object = object
    lock.unlock()
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Every request carries the caller's headers (an `Authorization` token, often), and
/// URLSession sends them again to wherever a redirect points. Prevents a server (mistaken, or
/// taken over) from handing the token to another server with a 3xx, around the same-server
/// rule of `next` links. Server B is `localhost`, A `127.0.0.1`:
/// another host, as well as another port.
@Suite("Redirects are followed on the same server only; the headers never go elsewhere")
struct RedirectTests {
  static let authorization = "Bearer \(RESTServer.token)"

  private func configuration(envelope: RemoteConfiguration.Envelope = .none) -> RemoteConfiguration {
    RemoteConfiguration(
      envelope: envelope, timeout: 10,
      prepareRequest: { $0.setValue(Self.authorization, forHTTPHeaderField: "Authorization") })
  }

  private func redirect(on server: RESTServer, status: Int = 302, to target: String) -> URL {
    let escaped = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    return server.url("/redirect/\(status)?to=\(escaped)")
  }

  @Test(
    "RemoteJSONSource refuses a redirect to another server, which gets no request", arguments: [301, 302, 307, 308])
  func jsonSourceRefusesOtherServer(status: Int) async throws {
    let a = try RESTServer()
    let b = try RESTServer()
    defer {
      a.stop()
      b.stop()
    }
    let source = RemoteJSONSource(configuration: configuration())
    do {
      _ = try await source.get(redirect(on: a, status: status, to: "http://localhost:\(b.port)/users"))
      Issue.record("the redirect to another server was followed")
    } catch SyncError.transport(let reason) {
      #expect(reason.contains("another server"), "\(reason)")
      #expect(!reason.contains(RESTServer.token))
    }
    #expect(try await b.authorizations().isEmpty, "the other server was sent a request")
  }

  @Test("a redirect on the same server is followed, with the headers")
  func sameServerIsFollowed() async throws {
    let a = try RESTServer()
    defer { a.stop() }
    let source = RemoteJSONSource(configuration: configuration())
    let body = try await source.get(redirect(on: a, to: "/users?page=2"))
    let page = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    #expect((page["result"] as? [Any])?.count == 2)
    #expect(try await a.authorizations() == [Self.authorization, Self.authorization])
  }

  @Test("a redirect given on a URLSession of the caller's is held to the same rule")
  func callersSessionToo() async throws {
    let a = try RESTServer()
    let b = try RESTServer()
    defer {
      a.stop()
      b.stop()
    }
    let source = RemoteJSONSource(configuration: configuration(), session: URLSession(configuration: .ephemeral))
    await #expect(throws: SyncError.self) {
      try await source.get(redirect(on: a, to: "http://localhost:\(b.port)/users"))
    }
    #expect(try await b.authorizations().isEmpty, "the other server was sent a request")
  }

  @Test("pullAll refuses a redirect to another server and stores nothing")
  func pullAllRefusesOtherServer() async throws {
    let fixture = try SyncFixture("redirect-pull")
    let b = try RESTServer()
    defer {
      fixture.close()
      b.stop()
    }
    let remote = RemoteCollection(
      fixture.users, baseURL: redirect(on: fixture.server, status: 307, to: "http://localhost:\(b.port)/users"),
      configuration: configuration(envelope: .key("result")))
    await #expect(throws: SyncError.self) { try await remote.pullAll() }
    #expect(fixture.users.count == 0)
    #expect(try await b.authorizations().isEmpty, "the other server was sent a request")
  }

  /// Prevents the task delegate that enforces the rule taking the place of the caller's
  /// URLSession delegate, whose own refusal of redirects was then lost.
  @Test("a caller's URLSession delegate still decides what the rule allows")
  func callersDelegateStillDecides() async throws {
    let a = try RESTServer()
    defer { a.stop() }
    let delegate = RefusingDelegate()
    let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
    let source = RemoteJSONSource(configuration: configuration(), session: session)
    await #expect(throws: SyncError.self) { try await source.get(redirect(on: a, to: "/users?page=2")) }
    #expect(delegate.asked == 1)
    #expect(try await a.authorizations().count == 1, "the redirect was followed")
  }

  @Test("the rule: the same scheme, host and port, or http to https on the same host")
  func rule() {
    let from = URL(string: "http://api.example.com/users")!
    for (target, allowed) in [
      ("http://api.example.com/other", true), ("https://api.example.com/users", true),
      ("https://API.example.com:443/users", true), ("https://api.example.com:8443/users", false),
      ("http://api.example.com:8080/users", false), ("https://example.com/users", false),
      ("http://other.example.com/users", false),
    ] {
      #expect(RedirectGuard.mayFollow(from: from, to: URL(string: target)!) == allowed, "\(target)")
    }
    #expect(!RedirectGuard.mayFollow(from: URL(string: "https://h/x")!, to: URL(string: "http://h/x")!))
  }
}

/// A URLSession delegate that refuses every redirect and counts how often it was asked (with a
/// pthread lock, which ThreadSanitizer sees).
final class RefusingDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0
  var asked: Int { lock.withLock { count } }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    lock.withLock { count += 1 }
    completionHandler(nil)
  }
}

import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What one call has moved so far.
public struct SyncProgress: Sendable, Equatable {
  /// Objects received or sent and applied.
  public var objects: Int
  /// Response and request body bytes.
  public var bytes: Int64

  public init(objects: Int = 0, bytes: Int64 = 0) {
    self.objects = objects
    self.bytes = bytes
  }
}

/// An HTTP answer.
struct HTTPResponse: Sendable {
  var status: Int
  var headers: [String: String]
  var body: Data
  /// The request's headers, kept so that an error about this answer can leave their values
  /// out (`HTTPTransport.secrets(of:)`, worked out only for an error).
  var sentHeaders: [String: String] = [:]

  /// `SyncError.http` for this answer: its status and a short excerpt of its body, without
  /// the request's header values should the server have echoed them.
  var failure: SyncError {
    .http(status: status, body: SyncError.excerpt(body, hiding: HTTPTransport.secrets(of: sentHeaders)))
  }

  func header(_ name: String) -> String? {
    headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
  }
}

/// Sends requests on a URLSession with Swift cancellation and a timeout of its own, and maps
/// failures to `SyncError`. The call ends as soon as the answer, the cancellation or the
/// timeout comes, whichever is first, without waiting for URLSession to acknowledge it.
struct HTTPTransport: Sendable {
  let session: URLSession
  /// What every request is checked against before it goes out.
  let policy: RequestPolicy
  /// `RemoteConfiguration.maximumResponseBytes`.
  let maximumResponseBytes: Int

  /// A transport on `session`, or on an ephemeral session without a cache whose request
  /// timeout is the configuration's.
  init(configuration: RemoteConfiguration, session: URLSession?) {
    policy = RequestPolicy(allowsInsecureHTTP: configuration.allowsInsecureHTTP)
    maximumResponseBytes = max(0, configuration.maximumResponseBytes)
    self.session =
      session
      ?? {
        let settings = URLSessionConfiguration.ephemeral
        settings.timeoutIntervalForRequest = Self.bounded(configuration.timeout)
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        return URLSession(configuration: settings)
      }()
  }

  /// What percent-encoding leaves as it is (RFC 3986's unreserved characters).
  private static let unreserved = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))

  /// Headers whose values are not secret: the ones the library sets itself.
  static let plainHeaders: Set<String> = [
    "accept", "content-type", "content-length", "if-match", "if-none-match", "idempotency-key",
  ]

  /// The values of `headers` (a request's) that an error must not show (an `Authorization` token,
  /// an API key): every value but those of `plainHeaders`, with what `credentialParts` finds
  /// in it (a server may echo the token of "Bearer X" alone); each also as JSON escapes it
  /// (`/` as `\/`) and as a URL query does (percent-encoded). Values under 4 characters are left.
  static func secrets(of headers: [String: String]) -> [String] {
    let values = headers.filter { !plainHeaders.contains($0.key.lowercased()) }.map(\.value)
    let plain = values.flatMap(RemoteConfiguration.credentialParts).filter { $0.count >= 4 }
    let spellings = plain.flatMap { value in
      [
        value,
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
          .replacingOccurrences(of: "/", with: "\\/"),
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? value,
      ]
    }
    // Longest first: a value's own spelling goes before a shorter one found inside it.
    return Array(Set(spellings)).sorted { $0.count > $1.count }
  }

  /// Sends `request` and waits for its answer, its cancellation or its timeout.
  ///
  /// - Parameter observe: for tests, given the call's bookkeeping object before the request
  ///   goes out, so that a test can hold a weak reference to it and see it released.
  ///
  /// - Throws: `SyncError.credentialsInURL` or `.insecureCredentials` before anything is sent
  ///   (`RequestPolicy`), `.responseTooLarge` for a body over the configured limit,
  ///   `.transport`, `.cancelled`.
  func send(_ request: URLRequest, observe: ((AnyObject) -> Void)? = nil) async throws -> HTTPResponse {
    let request = Self.boundingTimeout(Self.lowercasingScheme(request))
    try policy.check(request)
    let limit = maximumResponseBytes
    let call = PendingCall()
    observe?(call)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, Error>) in
        call.start(continuation)
        let task = session.dataTask(with: request) { data, response, error in
          if let error {
            let nsError = error as NSError
            if nsError.domain == NSURLErrorDomain && nsError.code == NSURLErrorCancelled {
              call.finish(.failure(SyncError.cancelled))
            } else {
              call.finish(.failure(SyncError.transport(Self.describe(nsError))))
            }
            return
          }
          guard let http = response as? HTTPURLResponse else {
            call.finish(.failure(SyncError.transport("no HTTP response")))
            return
          }
          guard (data?.count ?? 0) <= limit else {
            call.finish(.failure(SyncError.responseTooLarge(limit: limit)))
            return
          }
          var headers: [String: String] = [:]
          for (key, value) in http.allHeaderFields {
            if let key = key as? String, let value = value as? String { headers[key] = value }
          }
          let answer = HTTPResponse(
            status: http.statusCode, headers: headers, body: data ?? Data(),
            sentHeaders: request.allHTTPHeaderFields ?? [:])
          if let url = request.url, RedirectGuard.leavesServer(answer, from: url) {
            let credentials =
              RedirectGuard.target(of: answer, from: url).map(RemoteConfiguration.holdsCredentials) ?? false
            call.finish(.failure(credentials ? SyncError.credentialsInURL : SyncError.transport(RedirectGuard.refusal)))
          } else {
            call.finish(.success(answer))
          }
        }
        // A task's delegate comes before its session's, so the rule holds on a session the
        // caller passed in too; that session's own delegate still decides what the rule
        // allows, and answers challenges.
        task.delegate = RedirectGuard(next: session.delegate as? any URLSessionTaskDelegate)
        // A timer source, cancelled when the call ends and holding the call weakly: a timer
        // that held it kept its answer (and task) in memory until the timeout, for ever with
        // no timeout; a cancelled `asyncAfter` block still waits in its queue until then.
        let timeout = request.timeoutInterval > 0 ? request.timeoutInterval : 60
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + timeout)
        timer.setEventHandler { [weak call] in
          call?.finish(.failure(SyncError.transport("the request timed out")))
        }
        call.attach(task, timer: timer)
        task.resume()
        timer.resume()  // also when cancelled already: a source released suspended traps
      }
    } onCancel: {
      call.finish(.failure(SyncError.cancelled))
    }
  }

  /// The longest timeout given to URLSession, about 31 years: FoundationNetworking converts a
  /// timeout to milliseconds in an `Int` and traps on a longer one, on infinity and on NaN.
  static let longestTimeout: TimeInterval = 1_000_000_000

  /// `timeout` as URLSession takes it: at most `longestTimeout` (as good as none), and NaN as
  /// `send`'s deadline reads it, 60 seconds.
  static func bounded(_ timeout: TimeInterval) -> TimeInterval {
    timeout.isNaN ? 60 : min(timeout, longestTimeout)
  }

  /// `request` with its timeout `bounded`: `prepareRequest` or an `adjust` hook may have set it.
  private static func boundingTimeout(_ request: URLRequest) -> URLRequest {
    var bounded = request
    bounded.timeoutInterval = Self.bounded(request.timeoutInterval)
    return bounded
  }

  /// `request` with its URL's scheme in lower case: schemes are case-insensitive (RFC 3986),
  /// but URLSession on Linux refuses `HTTP://` as an unsupported URL.
  private static func lowercasingScheme(_ request: URLRequest) -> URLRequest {
    guard let url = request.url, let scheme = url.scheme, scheme != scheme.lowercased(),
      var parts = URLComponents(url: url, resolvingAgainstBaseURL: true)
    else { return request }
    parts.scheme = scheme.lowercased()
    var lowered = request
    lowered.url = parts.url ?? url
    return lowered
  }

  /// A failure's kind without the URL's query or any header.
  private static func describe(_ error: NSError) -> String {
    switch error.code {
    case NSURLErrorTimedOut: return "the request timed out"
    case NSURLErrorCannotConnectToHost: return "could not connect to the server"
    case NSURLErrorNetworkConnectionLost: return "the connection was lost"
    case NSURLErrorNotConnectedToInternet: return "no network"
    case NSURLErrorCannotFindHost: return "unknown host"
    case NSURLErrorUnsupportedURL: return "not an http or https URL"
    default: return "URL error \(error.code)"
    }
  }
}

/// Follows a redirect only on the server the request was sent to (same scheme, host and
/// port, the rule of `PageLink`), or from http to https on the same host: every request
/// carries the caller's headers (an `Authorization` token, often), and URLSession sends them
/// again to wherever a redirect points. A redirect elsewhere is not followed; `send` turns its
/// 3xx answer into `SyncError.transport`. What the rule allows goes on to the delegate of a
/// session the caller passed in (`next`), which may still refuse it; challenges go there too.
final class RedirectGuard: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
  static let refusal =
    "the server redirected the request to another server; not followed, as its headers would go along"
  private let next: (any URLSessionTaskDelegate)?

  init(next: (any URLSessionTaskDelegate)?) {
    self.next = next
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
  ) {
    guard let first = task.currentRequest?.url ?? task.originalRequest?.url, let target = request.url,
      Self.mayFollow(from: first, to: target)
    else {
      completionHandler(nil)
      return
    }
    guard let next else { return completionHandler(request) }
    next.urlSession(
      session, task: task, willPerformHTTPRedirection: response, newRequest: request,
      completionHandler: completionHandler)
  }

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
  ) {
    guard let next else { return completionHandler(.performDefaultHandling, nil) }
    next.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
  }

  /// The same server, or the same host reached over https instead of http (an upgrade many
  /// servers answer plain requests with; the headers then travel encrypted, to the same host).
  static func mayFollow(from url: URL, to target: URL) -> Bool {
    // Prevents: a redirect to `https://user:secret@same-host/` making URLSession send (and the
    // server echo) a `Basic` credential the caller never gave.
    if RemoteConfiguration.holdsCredentials(target) { return false }
    if PageLink.sameServer(url, target) { return true }
    guard url.scheme?.lowercased() == "http", target.scheme?.lowercased() == "https",
      let host = url.host?.lowercased(), host == target.host?.lowercased()
    else { return false }
    return target.port == nil || target.port == 443
  }

  /// Whether `response` is a redirect (that was not followed) that the rule refuses.
  static func leavesServer(_ response: HTTPResponse, from url: URL) -> Bool {
    guard (300..<400).contains(response.status), response.header("Location") != nil else { return false }
    guard let target = target(of: response, from: url) else { return true }
    return !mayFollow(from: url, to: target)
  }

  /// Where a redirect answer points, resolved against the request's URL.
  static func target(of response: HTTPResponse, from url: URL) -> URL? {
    response.header("Location").flatMap { URL(string: $0, relativeTo: url)?.absoluteURL }
  }
}

/// One request in flight: resumes its continuation exactly once, with the first outcome, and
/// cancels the URLSession task when that outcome is not the answer. Once it has an outcome it
/// lets go of its task and cancels its timer, so nothing keeps it (and the answer) alive.
private final class PendingCall: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var continuation: CheckedContinuation<HTTPResponse, Error>?
  private var task: URLSessionTask?
  private var timer: (any DispatchSourceTimer)?
  private var outcome: Result<HTTPResponse, Error>?

  func start(_ continuation: CheckedContinuation<HTTPResponse, Error>) {
    lock.lock()
    if let outcome {
      lock.unlock()
      continuation.resume(with: outcome)
      return
    }
    self.continuation = continuation
    lock.unlock()
  }

  /// Keeps `task` (to cancel it) and `timer` (to cancel it when the call ends), or, when the
  /// call has already ended, cancels both.
  func attach(_ task: URLSessionTask, timer: any DispatchSourceTimer) {
    lock.lock()
    let finished = outcome != nil
    if !finished {
      self.task = task
      self.timer = timer
    }
    lock.unlock()
    if finished {
      task.cancel()
      timer.cancel()
    }
  }

  func finish(_ result: Result<HTTPResponse, Error>) {
    lock.lock()
    guard outcome == nil else {
      lock.unlock()
      return
    }
    outcome = result
    let continuation = self.continuation
    self.continuation = nil
    let task = self.task
    let timer = self.timer
    self.task = nil  // the task's completion handler holds this call
    self.timer = nil
    lock.unlock()
    timer?.cancel()
    continuation?.resume(with: result)
    if case .failure = result { task?.cancel() }
  }
}

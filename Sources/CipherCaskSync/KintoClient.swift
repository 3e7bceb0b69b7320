import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Sends requests to a Kinto server with retries (`RetryPolicy`) and the server's `Backoff`
/// obeyed, counting what it sends. One per `CaskSync`.
final class KintoClient: Sendable {
  let server: KintoServer
  private let transport: HTTPTransport
  /// When the next request may go, after a `Backoff` header; and counters for reports.
  private let state = Mutex(State())
  /// Told of every retry, for the events a screen shows.
  let onRetry: @Sendable (_ attempt: Int, _ delay: TimeInterval, _ reason: String) -> Void

  struct State {
    var notBefore: ContinuousClock.Instant?
    var requests = 0
    var bytes: Int64 = 0
  }

  init(server: KintoServer, onRetry: @escaping @Sendable (Int, TimeInterval, String) -> Void) {
    self.server = server
    var configuration = RemoteConfiguration(timeout: server.timeout)
    configuration.allowsInsecureHTTP = server.allowsInsecureHTTP
    transport = HTTPTransport(configuration: configuration, session: nil)
    self.onRetry = onRetry
  }

  /// Requests sent and body bytes moved so far.
  var counters: (requests: Int, bytes: Int64) { state.withLock { ($0.requests, $0.bytes) } }

  /// Sends a request, retrying as the policy says, and returns the last answer whatever its
  /// status (callers decide what a 4xx means).
  ///
  /// - Throws: `SyncError.transport` when every attempt went unanswered, `.http` when every
  ///   attempt got a retryable status, `.cancelled`, and the request policy's errors.
  func send(
    _ method: String, _ url: URL, json: Any? = nil, headers: [String: String] = [:]
  ) async throws -> HTTPResponse {
    let body = try json.map { try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]) }
    let policy = server.retry
    var attempt = 0
    while true {
      try await waitForBackoff()
      var request = URLRequest(url: url, timeoutInterval: server.timeout)
      request.httpMethod = method
      request.setValue("application/json", forHTTPHeaderField: "Accept")
      if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
      request.setValue(server.authorization, forHTTPHeaderField: "Authorization")
      for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
      request.httpBody = body
      let failure: SyncError
      var wait: TimeInterval?
      do {
        if Task.isCancelled { throw SyncError.cancelled }
        let response = try await transport.send(request)
        record(response, sent: body?.count ?? 0)
        guard RetryPolicy.retries(status: response.status) else { return response }
        failure = response.failure
        wait = response.header("Retry-After").flatMap(TimeInterval.init)
      } catch SyncError.transport(let reason) {
        failure = .transport(reason)
      }
      attempt += 1
      guard attempt < policy.attempts else { throw failure }
      let delay = wait ?? policy.delay(after: attempt - 1)
      // A server asking for a longer pause than the policy allows gets it by our giving up.
      guard delay <= policy.maximumDelay else { throw failure }
      onRetry(attempt, delay, failure.description)
      try await Self.sleep(delay)
    }
  }

  /// Sends and requires a 2xx answer.
  func expect(
    _ method: String, _ url: URL, json: Any? = nil, headers: [String: String] = [:]
  ) async throws -> HTTPResponse {
    let response = try await send(method, url, json: json, headers: headers)
    guard (200..<300).contains(response.status) else { throw response.failure }
    return response
  }

  private func record(_ response: HTTPResponse, sent: Int) {
    let backoff = response.header("Backoff").flatMap(TimeInterval.init)
    state.withLock { state in
      state.requests += 1
      state.bytes += Int64(sent + response.body.count)
      if let backoff, backoff > 0 {
        state.notBefore = .now + .milliseconds(Int64(min(backoff, 3600) * 1000))
      }
    }
  }

  private func waitForBackoff() async throws {
    guard let until = state.withLock({ $0.notBefore }) else { return }
    let remaining = ContinuousClock.now.duration(to: until)
    guard remaining > .zero else { return }
    let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
    guard seconds <= server.retry.maximumDelay else {
      throw SyncError.transport("the server asked clients to back off for \(Int(seconds.rounded())) s")
    }
    try await Self.sleep(seconds)
  }

  /// Sleeps, ending at once with `SyncError.cancelled` when the task is cancelled.
  static func sleep(_ seconds: TimeInterval) async throws {
    do {
      try await Task.sleep(for: .milliseconds(Int64(max(0, seconds) * 1000)))
    } catch {
      throw SyncError.cancelled
    }
  }
}

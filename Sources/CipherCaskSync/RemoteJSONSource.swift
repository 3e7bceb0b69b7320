import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Plain GETs of a REST resource through the transport `RemoteCollection` uses, for callers
/// that keep the JSON as the server sent it instead of decoding a Codable type (the `cask`
/// tool's `pull` and `import URL`, Docs/CLI.md).
///
/// Requests go through the configuration's `prepareRequest` hook (headers such as
/// Authorization) and `timeout`, follow Swift cancellation, and fail with the same
/// `SyncError`s, none of which carries a header. Pagination and the shape of the body are the
/// caller's (`RemoteConfiguration`'s `envelope` and `pagination` are not used here).
public struct RemoteJSONSource: Sendable {
  /// The request hook and timeout.
  public let configuration: RemoteConfiguration
  let transport: HTTPTransport

  /// - Parameters:
  ///   - configuration: its `prepareRequest` and `timeout` apply to every request.
  ///   - session: the URLSession to use (an ephemeral one without a cache by default).
  public init(configuration: RemoteConfiguration = RemoteConfiguration(), session: URLSession? = nil) {
    self.configuration = configuration
    transport = HTTPTransport(configuration: configuration, session: session)
  }

  /// GETs `url` (with `Accept: application/json`) and returns the body of a 2xx answer.
  ///
  /// - Throws: `SyncError.http` for another status (with at most a short excerpt of the
  ///   body), `.transport` when no answer came (connection refused or dropped, timeout),
  ///   `.cancelled` when the task was cancelled.
  /// - Complexity: one request; the body is held in memory.
  public func get(_ url: URL) async throws -> Data {
    if Task.isCancelled { throw SyncError.cancelled }
    var request = URLRequest(url: url, timeoutInterval: configuration.timeout)
    request.httpMethod = "GET"
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    configuration.prepareRequest(&request)
    let response: HTTPResponse
    do {
      response = try await transport.send(request)
    } catch is CancellationError {
      throw SyncError.cancelled
    }
    guard (200..<300).contains(response.status) else {
      throw response.failure
    }
    return response.body
  }
}

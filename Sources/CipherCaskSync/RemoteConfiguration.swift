import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// How a REST resource shapes its responses, and how requests are prepared.
public struct RemoteConfiguration: Sendable {
  /// Where the objects sit in a response body.
  public enum Envelope: Sendable, Equatable {
    /// The body is the object, or an array of objects.
    case none
    /// The body is an object whose `key` holds the object or the array (the `result` member of the REST client this replaces).
    case key(String)
  }

  /// How `pullAll()` finds the next page.
  public enum Pagination: Sendable, Equatable {
    /// One response holds everything.
    case none
    /// The response body is an object whose `key` holds the next page's URL (absolute or
    /// relative), or null / absent on the last page. Needs an enveloped response.
    case nextURL(key: String)
    /// Pages are asked for with `?parameter=N`, from `first`, until a page holds no object.
    case page(parameter: String, first: Int)

    var firstPage: Int {
      if case .page(_, let first) = self { return first }
      return 0
    }
  }

  /// The key that holds an object's id in the server's JSON (a REST client's `uid`). The
  /// collection's `T.id` must decode from it: the local object's id is then `T`'s `id`
  /// property, mapped by `T`'s `CodingKeys`.
  public var remoteIDKey = "id"
  /// Maps a local id to the path component of its URL (identity by default).
  public var remoteID: @Sendable (String) -> String = { $0 }
  /// Where objects sit in responses.
  public var envelope: Envelope = .none
  /// How pages follow one another.
  public var pagination: Pagination = .none
  /// Seconds before a request without an answer fails with `SyncError.transport`.
  public var timeout: TimeInterval = 30
  /// The most pages `pullAll()` fetches; one more fails the call with `SyncError.decoding`,
  /// writing nothing. Every object is held in memory until the last page, so this bounds
  /// what a server whose pages never end (each with new objects) can make the call hold.
  public var maximumPages = 10_000
  /// The largest response body accepted, in bytes (64 MiB by default); a larger one fails
  /// the call with `SyncError.responseTooLarge`, and nothing of it is decoded or stored.
  public var maximumResponseBytes = 64 << 20
  /// Whether credential headers (`isCredentialHeader`) may go over plain `http://` to a host
  /// other than the loopback one. `false` by default: such a request fails with
  /// `SyncError.insecureCredentials` before it is sent, as anyone on the path could read it.
  public var allowsInsecureHTTP = false
  /// Called on every request before it is sent: headers such as Authorization or API keys.
  /// Header values never appear in errors.
  public var prepareRequest: @Sendable (inout URLRequest) -> Void = { _ in }
  /// Makes the decoder for responses (snake_case keys, ISO 8601 dates, …).
  public var makeDecoder: @Sendable () -> JSONDecoder = { JSONDecoder() }
  /// Makes the encoder for request bodies.
  public var makeEncoder: @Sendable () -> JSONEncoder = { JSONEncoder() }

  public init(
    remoteIDKey: String = "id", envelope: Envelope = .none, pagination: Pagination = .none,
    timeout: TimeInterval = 30, prepareRequest: @escaping @Sendable (inout URLRequest) -> Void = { _ in }
  ) {
    self.remoteIDKey = remoteIDKey
    self.envelope = envelope
    self.pagination = pagination
    self.timeout = timeout
    self.prepareRequest = prepareRequest
  }
}

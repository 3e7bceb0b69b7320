import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A Kinto server (the JSON storage and sync service) that `CaskSync` talks to, reached with
/// HTTP basic authentication.
///
/// The password lives in this value and in the `Authorization` header of each request; it
/// never appears in an error, an event or a report.
public struct KintoServer: Sendable {
  /// The server's `/v1` root, for example `https://kinto.example.com/v1`.
  public let url: URL
  /// The basic-auth user.
  public let user: String
  let password: String
  /// How failed requests are retried.
  public var retry = RetryPolicy()
  /// Seconds before a request without an answer counts as failed (and is retried).
  public var timeout: TimeInterval = 30
  /// Records asked for per page of a pull (`_limit`).
  public var pageSize = 500
  /// Whether the server dates records in the order their writes commit, so that a listing
  /// made after a push can show every change older than the push's records (Docs/SYNC.md,
  /// section 15.3, step 8). True of Kinto's memory backend in one process; not of Kinto on
  /// PostgreSQL, which dates a record when its statement runs, so a batch that began before
  /// this device's push can commit after it with an older date. Only when `true` does a sync
  /// move its cursor past its own pushes in one listing; `false` by default, and then the
  /// next sync lists the pushed records again (more bytes, never a change skipped).
  public var datesInCommitOrder = false
  /// Seconds a record's date may precede its commit, for a server that dates records when
  /// their statement runs (Kinto on PostgreSQL): the longest a write transaction on the server
  /// can stay open, plus any difference between the clocks of Kinto's hosts and PostgreSQL's.
  /// Records dated within this margin before a listing may still commit after it, so every
  /// listing starts at the last date known to be settled, not at the cursor, and a collection
  /// that looks unchanged is listed once more until the margin has passed (Docs/SYNC.md,
  /// section 15.3, step 2). 60 s by default: twice `timeout`'s default, longer than a batch
  /// request is waited for. A transaction open longer that commits an update of a record
  /// dated before a device's settled date is missed by that device until the record changes
  /// again. Not used when `datesInCommitOrder` is set. A value that is not a number counts
  /// as the largest margin (10⁹ s).
  public var settlingMargin: TimeInterval = 60
  /// Whether credentials may go over plain `http://` to a host other than this machine.
  /// `false` by default: such a request fails with `SyncError.insecureCredentials` unsent.
  public var allowsInsecureHTTP = false

  /// - Parameters:
  ///   - url: the server's `/v1` root.
  ///   - user: the basic-auth user.
  ///   - password: the basic-auth password.
  public init(url: URL, user: String, password: String) {
    self.url = url
    self.user = user
    self.password = password
  }

  /// The settling margin in milliseconds, as Kinto dates records; 0 for a server that dates
  /// records in commit order.
  var settlingMilliseconds: Int64 {
    if datesInCommitOrder { return 0 }
    let seconds = settlingMargin.isNaN ? 1e9 : min(max(settlingMargin, 0), 1e9)
    return Int64((seconds * 1000).rounded(.up))
  }

  /// The `Authorization` header's value.
  var authorization: String {
    "Basic " + Data((user + ":" + password).utf8).base64EncodedString()
  }

  /// `url` with `path` (which starts with `/`) appended, and `query`.
  func endpoint(_ path: String, query: [URLQueryItem] = []) -> URL {
    var text = url.absoluteString
    while text.hasSuffix("/") { text.removeLast() }
    var components = URLComponents(string: text + path)
    if !query.isEmpty { components?.queryItems = query }
    // `path` is built from names checked by `KintoPath`: it always parses.
    return components?.url ?? url
  }

  /// The path of `url` below the server's root, as `/v1/batch` wants its requests' paths.
  var rootPath: String {
    var path = url.path
    while path.hasSuffix("/") { path.removeLast() }
    return path
  }
}

/// How `CaskSync` retries a request that failed in a way that may pass: no answer, a 5xx, a
/// 429, or a 409 (Kinto's answer to contention between writers). Other 4xx are never retried.
/// The wait before attempt n+1 is `Retry-After` when the server sent one, else
/// `baseDelay · 2^n` capped at `maximumDelay`, with jitter (a random part of up to half).
/// A `Backoff` header makes every request to the server wait that many seconds first.
public struct RetryPolicy: Sendable, Equatable {
  /// Attempts per request, the first included.
  public var attempts: Int
  /// The first wait, in seconds.
  public var baseDelay: TimeInterval
  /// The longest wait between two attempts, in seconds; a longer `Retry-After` or `Backoff`
  /// ends the call with the error instead of waiting.
  public var maximumDelay: TimeInterval

  public init(attempts: Int = 5, baseDelay: TimeInterval = 0.2, maximumDelay: TimeInterval = 30) {
    self.attempts = max(1, attempts)
    self.baseDelay = max(0, baseDelay)
    self.maximumDelay = max(0, maximumDelay)
  }

  /// The wait before the attempt after `attempt` (0-based) when the server named none.
  func delay(after attempt: Int, random: Double = Double.random(in: 0..<1)) -> TimeInterval {
    let exponential = min(maximumDelay, baseDelay * pow(2, Double(min(attempt, 30))))
    return exponential * (0.5 + random / 2)
  }

  /// Whether an answer with `status` may pass on another attempt.
  static func retries(status: Int) -> Bool {
    status == 409 || status == 429 || status == 408 || (500...599).contains(status)
  }
}

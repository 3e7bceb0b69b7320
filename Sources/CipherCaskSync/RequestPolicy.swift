import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension RemoteConfiguration {
  /// Whether a request header named `name` carries a credential: `Authorization`,
  /// `Proxy-Authorization`, `Cookie`, and any name (case-insensitively) with `auth`, `token`,
  /// `key`, `secret`, `session`, `cookie`, `password`, `credential` or `signature` in it
  /// (`X-API-Key`, `X-Auth-Token`), except the headers the library sets itself
  /// (`Idempotency-Key`). Such headers are not sent over plain http to another host than the
  /// loopback one unless `allowsInsecureHTTP` is set.
  public static func isCredentialHeader(_ name: String) -> Bool {
    let lowered = name.lowercased()
    guard !HTTPTransport.plainHeaders.contains(lowered) else { return false }
    return credentialWords.contains { lowered.contains($0) }
  }

  private static let credentialWords = [
    "auth", "token", "key", "secret", "session", "cookie", "password", "credential", "signature",
  ]

  /// Whether `host` is this machine by its loopback address: `localhost`, `127.0.0.0/8` or
  /// `::1`. Traffic to it never leaves the machine, so plain http carries credentials there.
  public static func isLoopback(host: String) -> Bool {
    var lowered = host.lowercased()
    if lowered.hasPrefix("[") && lowered.hasSuffix("]") { lowered = String(lowered.dropFirst().dropLast()) }
    if lowered == "localhost" || lowered.hasSuffix(".localhost") || lowered == "::1" { return true }
    let parts = lowered.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4, parts[0] == "127" else { return false }
    return parts.allSatisfy { part in
      !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && UInt8(part) != nil
    }
  }

  /// `value` and what a server may echo of it: the part after the first space ("Bearer X":
  /// X alone) and, for `Basic`, the decoded `user:password` and its password.
  package static func credentialParts(_ value: String) -> [String] {
    let token = value.split(separator: " ", maxSplits: 1).dropFirst().map { $0.trimmingCharacters(in: .whitespaces) }
    var parts = [value] + token
    if value.lowercased().hasPrefix("basic "), let encoded = token.first,
      let decoded = Data(base64Encoded: encoded).flatMap({ String(data: $0, encoding: .utf8) })
    {
      parts.append(decoded)
      if let colon = decoded.firstIndex(of: ":") { parts.append(String(decoded[decoded.index(after: colon)...])) }
    }
    return parts
  }

  /// Whether `url` has a user or password part (`user@`, `user:secret@`, even an empty one).
  package static func holdsCredentials(_ url: URL) -> Bool {
    if url.user != nil || url.password != nil { return true }
    // `URL.user` is nil for `https://:secret@host`; the authority still holds an `@`.
    let text = url.absoluteString
    guard let schemeEnd = text.range(of: "://") else { return false }
    let rest = text[schemeEnd.upperBound...]
    let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    return authority.contains("@")
  }
}

/// The checks every request passes before it is sent (`HTTPTransport.send`): no credential in
/// its URL, and no credential header over plain http to another machine unless allowed.
struct RequestPolicy: Sendable {
  var allowsInsecureHTTP: Bool

  /// - Throws: `SyncError.credentialsInURL` or `.insecureCredentials`.
  func check(_ request: URLRequest) throws {
    guard let url = request.url else { return }
    if RemoteConfiguration.holdsCredentials(url) { throw SyncError.credentialsInURL }
    guard !allowsInsecureHTTP, url.scheme?.lowercased() == "http", let host = url.host,
      !RemoteConfiguration.isLoopback(host: host)
    else { return }
    let headers = request.allHTTPHeaderFields ?? [:]
    if headers.keys.contains(where: RemoteConfiguration.isCredentialHeader) {
      throw SyncError.insecureCredentials(host: host)
    }
  }
}

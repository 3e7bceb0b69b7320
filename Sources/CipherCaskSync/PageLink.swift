import Foundation

/// The `next` link of a paged answer, and the rule for following it.
///
/// Every page is requested with the same headers (an `Authorization` token, often), so a
/// link may lead only to the server the walk started on: the same scheme, host and port. A
/// link elsewhere (a mistaken or hostile answer) would hand that server the headers, which is
/// why HTTP clients drop credentials on a redirect to another host.
package enum PageLink {
  /// `url` with `parameter=page` in its query, replacing any such item: a numbered page.
  package static func numbered(_ url: URL, parameter: String, page: Int) -> URL {
    var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
    var items = components?.queryItems ?? []
    items.removeAll { $0.name == parameter }
    items.append(URLQueryItem(name: parameter, value: String(page)))
    components?.queryItems = items
    return components?.url ?? url
  }

  /// The URL `link` names (absolute, or relative to `page`), or `nil` when it is no URL.
  ///
  /// - Throws: `PageLink.LeavesServer` when that URL is on another server than `first`.
  package static func resolve(_ link: String, on page: URL, walkStartedAt first: URL) throws -> URL? {
    guard let next = URL(string: link, relativeTo: page)?.absoluteURL else { return nil }
    guard sameServer(next, first) else { throw LeavesServer() }
    return next
  }

  /// Whether two URLs are on the same server: scheme, host and port.
  package static func sameServer(_ one: URL, _ other: URL) -> Bool {
    origin(of: one) == origin(of: other)
  }

  /// Thrown for a link to another server; its text names neither link nor server.
  package struct LeavesServer: Error {
    package let reason = "its next link leads to another server, which is not sent this request's headers"
  }

  /// Scheme, host and port, lowercased, with the scheme's default port filled in.
  private static func origin(of url: URL) -> String {
    let scheme = url.scheme?.lowercased() ?? ""
    let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
    return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
  }
}

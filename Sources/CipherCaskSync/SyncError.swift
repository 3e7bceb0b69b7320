import Foundation

/// Errors of remote sync. No case carries a request header, a token or a password; an HTTP
/// error carries at most a short excerpt of the response body.
public enum SyncError: Error, Sendable, Equatable {
  /// Thrown when the server answered with a status outside 200–299 (other than a conflict).
  case http(status: Int, body: String)
  /// Thrown when the server answered 409 or 412 to a change made against a version it no
  /// longer has. `local` is the JSON the client sent (nil for a delete); `remote` is the
  /// server's current version when it sent one. A queued change stays queued.
  case conflict(id: String, local: Data?, remote: Data?)
  /// Thrown when a response is not the JSON the collection expects.
  case decoding(String)
  /// Thrown when the request never got an answer: connection refused or dropped, timeout.
  case transport(String)
  /// Thrown when the call was cancelled.
  case cancelled
  /// Thrown when `push` or `delete(id:)` is called for an object with changes waiting in the
  /// outbox: sent first, the direct change would be undone by the older queued one. Nothing
  /// was sent; send the queue (`pushPending`) first, or queue the change.
  case pendingChanges(id: String)

  // Refused before or while receiving an answer.

  /// Thrown when a request's URL (given, or a page's next link) holds a user name or a
  /// password (`https://user:secret@host/`): it would go out as a `Basic` Authorization header
  /// that a server may echo, and shows wherever the URL is logged. Nothing was sent. Put the
  /// credential in a header set by `prepareRequest` instead.
  case credentialsInURL
  /// Thrown when a request carrying a credential header (`Authorization`, `Cookie`, an API key:
  /// `RemoteConfiguration.isCredentialHeader`) would go over plain `http://` to a host other
  /// than the loopback one, where anyone on the path reads it. Nothing was sent. `host` is the
  /// URL's host; set `RemoteConfiguration.allowsInsecureHTTP` to send anyway.
  case insecureCredentials(host: String)
  /// Thrown when a response body is larger than `RemoteConfiguration.maximumResponseBytes`
  /// (`limit`). Nothing of it is decoded or stored.
  case responseTooLarge(limit: Int)
  /// Thrown when an end-to-end passphrase does not open the collection: its key check on the
  /// server, or a record sealed under another key.
  case wrongPassphrase
}

extension SyncError: CustomStringConvertible {
  public var description: String {
    switch self {
    case .http(let status, let body):
      return body.isEmpty ? "HTTP \(status)" : "HTTP \(status): \(body)"
    case .conflict(let id, _, _):
      return "conflict: the server has another version of object '\(Self.shortened(id))'"
    case .decoding(let detail):
      return "undecodable response: \(detail)"
    case .transport(let detail):
      return "network failure: \(detail)"
    case .cancelled:
      return "cancelled"
    case .pendingChanges(let id):
      return "object '\(Self.shortened(id))' has changes waiting in the outbox: send them first (pushPending)"
    case .credentialsInURL:
      return "the URL holds a user name or password; not sent (send the credential in a header instead)"
    case .insecureCredentials(let host):
      return "not sending a credential header over plain http:// to '\(Self.shortened(host))' "
        + "(use https://, or allow insecure http explicitly)"
    case .responseTooLarge(let limit):
      return "the answer is larger than \(limit) bytes, the most accepted"
    case .wrongPassphrase:
      return "the end-to-end passphrase does not open this collection"
    }
  }

  /// An id cut at 64 characters.
  static func shortened(_ id: String) -> String {
    id.count > 64 ? String(id.prefix(64)) + "…" : id
  }

  /// The first 200 characters of a body, on one line, with every one of `secrets` (the
  /// request's header values, should the server have echoed one) replaced by `…`.
  static func excerpt(_ data: Data, hiding secrets: [String] = []) -> String {
    let text = String(decoding: data.prefix(200), as: UTF8.self)
    let line = text.map { $0.isNewline ? " " : $0 }
    return hiding(secrets, in: String(line) + (data.count > 200 ? "…" : ""))
  }

  /// `text` with every one of `secrets` replaced by `…`, also one cut by the `…` that ends an
  /// excerpt (its first characters just before the mark).
  package static func hiding(_ secrets: [String], in text: String) -> String {
    var text = text
    for secret in secrets where !secret.isEmpty {
      text = text.replacingOccurrences(of: secret, with: "…")
      guard text.hasSuffix("…") else { continue }
      let kept = Array(text.dropLast().utf8)
      let start = Array(secret.utf8)
      if let length = (1..<start.count).last(where: { kept.suffix($0).elementsEqual(start.prefix($0)) }) {
        text = String(decoding: kept.dropLast(length), as: UTF8.self) + "…"
      }
    }
    return text
  }
}

import CaskTestSupport
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `SyncError.http` keeps the start of an error answer's body, and a server that echoes the
/// request (many APIs' 401 names the token) put the caller's credential in it: only the
/// `cask` tool removed it, not the library. Prevented here: the library removes it.
@Suite("HTTP errors do not show the request's credentials")
struct ErrorSecretTests {
  static let token = "sk-live/9a8b+7c6d=5e4f"

  @Test(
    "a server that echoes the Authorization header, or its token alone: the error's excerpt shows neither",
    arguments: ["/token-error", "/echo"])
  func echoedCredentialIsHidden(path: String) async throws {
    let server = try RESTServer()
    defer { server.stop() }
    let source = RemoteJSONSource(
      configuration: RemoteConfiguration(prepareRequest: {
        $0.setValue("Bearer \(Self.token)", forHTTPHeaderField: "Authorization")
      }))
    do {
      _ = try await source.get(server.url(path))
      Issue.record("\(path) answered 2xx")
    } catch SyncError.http(let status, let body) {
      #expect(status == 400 || status == 401)
      #expect(body.contains("…"), "the echoed value is marked: \(body)")
      #expect(!body.contains("9a8b"), "\(body)")
    }
  }

  @Test("the token is hidden as JSON escapes it, percent-encoded, and cut by the excerpt's end")
  func otherSpellingsAreHidden() throws {
    var request = URLRequest(url: URL(string: "http://127.0.0.1/x")!)
    request.setValue("Bearer \(Self.token)", forHTTPHeaderField: "Authorization")
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    let secrets = HTTPTransport.secrets(of: request.allHTTPHeaderFields ?? [:])
    #expect(!secrets.contains("application/json"), "a header the library sets is not a secret")
    let escaped = #"{"error": "token sk-live\/9a8b+7c6d=5e4f", "q": "t=sk-live%2F9a8b%2B7c6d%3D5e4f"}"#
    let excerpt = SyncError.excerpt(Data(escaped.utf8), hiding: secrets)
    #expect(!excerpt.contains("9a8b"), "\(excerpt)")
    // An echo cut by the 200-byte excerpt: its first characters are removed before the mark.
    let cut = String(repeating: "x", count: 190) + "Bearer " + Self.token
    let cutExcerpt = SyncError.excerpt(Data(cut.utf8), hiding: secrets)
    #expect(cutExcerpt == String(repeating: "x", count: 190) + "…", "\(cutExcerpt)")
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The checks every request passes in the library: no user or password in a URL (given or
/// redirected to), no credential header over plain http to a host that is not loopback
/// without `allowsInsecureHTTP`, and a size limit on answers; each a `SyncError` of its own.
@Suite("HTTP requests: credentials in URLs, plain http, answer sizes")
struct RequestPolicyTests {
  func source(
    allowsInsecureHTTP: Bool = false, maximumResponseBytes: Int = 64 << 20
  ) -> RemoteJSONSource {
    var configuration = RemoteConfiguration(prepareRequest: {
      $0.setValue("Bearer \(RESTServer.token)", forHTTPHeaderField: "Authorization")
    })
    configuration.allowsInsecureHTTP = allowsInsecureHTTP
    configuration.maximumResponseBytes = maximumResponseBytes
    return RemoteJSONSource(configuration: configuration)
  }

  @Test("a URL with a user or password is refused before anything is sent, and the error shows neither")
  func credentialsInURL() async throws {
    let server = try RESTServer()
    defer { server.stop() }
    for text in [
      "http://alice:hunter2@127.0.0.1:\(server.port)/users", "http://alice@127.0.0.1:\(server.port)/users",
      "http://:hunter2@127.0.0.1:\(server.port)/users",
    ] {
      let url = try #require(URL(string: text))
      await #expect(throws: SyncError.credentialsInURL) { try await source().get(url) }
    }
    #expect(try await server.authorizations().isEmpty, "a request was sent")
    #expect(!SyncError.credentialsInURL.description.contains("hunter2"))
    // As a redirect's target on the same server: not followed.
    let target = "http://alice:hunter2@127.0.0.1:\(server.port)/echo"
      .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    await #expect(throws: SyncError.credentialsInURL) {
      try await source().get(server.url("/redirect/302?to=\(target)"))
    }
  }

  /// 0.0.0.0 reaches this machine on Linux without being a loopback name.
  @Test("a credential header over plain http to a host that is not loopback needs allowsInsecureHTTP")
  func plainHTTP() async throws {
    let server = try RESTServer()
    defer { server.stop() }
    let url = try #require(URL(string: "http://0.0.0.0:\(server.port)/users"))
    await #expect(throws: SyncError.insecureCredentials(host: "0.0.0.0")) { try await source().get(url) }
    #expect(try await server.authorizations().isEmpty, "the credential was sent")
    #expect(try await !source(allowsInsecureHTTP: true).get(url).isEmpty)
    #expect(try await !source().get(server.url("/users")).isEmpty, "loopback by its address")
    #expect(RemoteConfiguration.isLoopback(host: "localhost") && RemoteConfiguration.isLoopback(host: "127.8.9.1"))
    #expect(RemoteConfiguration.isLoopback(host: "[::1]") && !RemoteConfiguration.isLoopback(host: "127.0.0.1.example"))
    #expect(RemoteConfiguration.isCredentialHeader("X-API-Key") && RemoteConfiguration.isCredentialHeader("Cookie"))
    #expect(
      !RemoteConfiguration.isCredentialHeader("Idempotency-Key") && !RemoteConfiguration.isCredentialHeader("Accept"))
  }

  @Test("an answer over maximumResponseBytes fails with responseTooLarge; one at the limit is taken")
  func answerSizeLimit() async throws {
    let server = try RESTServer()
    defer { server.stop() }
    let body = String(repeating: "x", count: 5000)
    try await server.put(file: "big", body)
    await #expect(throws: SyncError.responseTooLarge(limit: 4999)) {
      try await source(maximumResponseBytes: 4999).get(server.url("/files/big"))
    }
    #expect(try await source(maximumResponseBytes: 5000).get(server.url("/files/big")).count == 5000)
  }

  @Test("a Basic header's decoded user:password and password are hidden from error text")
  func basicCredentialIsHidden() {
    let basic = "Basic " + Data("alice:hunter2-pw".utf8).base64EncodedString()
    let secrets = HTTPTransport.secrets(of: ["Authorization": basic])
    let text = SyncError.hiding(secrets, in: "user alice:hunter2-pw, password hunter2-pw, token \(basic)")
    #expect(!text.contains("hunter2"), "\(text)")
  }
}

import CaskTestSupport
import Foundation
import Testing

/// `cask pull`'s side of a review of the sync layer (Tests/CipherCaskSyncTests/
/// ReviewSyncFindingsTests.swift): pages that start over, pages that never end, next links
/// that are no link, and a token echoed without its scheme.
@Suite("Sync review: cask pull")
struct ReviewSyncFindingsCLITests {
  let password = "review-pw"

  @Test(
    "pull ends with an error when the pages start over, instead of walking them forever",
    arguments: [[String](), ["--page-parameter", "page"]])
  func wrappingPagesEnd(paging: [String]) throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pullwrap")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let result = try cask.run(
      ["pull", "s", server.address("/pages/wrap"), "--collection", "p", "--id-key", "id"] + paging,
      password: password, prefix: ["/usr/bin/timeout", "-s", "KILL", "20"])
    // `timeout` kills it (SIGKILL: the runner's children may inherit a blocked SIGTERM).
    #expect(result.status != 9, "still walking pages that start over after 20 s (killed)")
    #expect(result.status == 1)
    #expect(
      result.err.hasPrefix("Error: invalid answer from '\(server.address("/pages/wrap"))' (page 4)"), "\(result.err)")
    #expect(result.err.hasSuffix("; nothing was written\n"), "\(result.err)")
  }

  @Test("pull of pages that never end stops after --max-pages with one line, writing nothing")
  func endlessPagesEnd() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pullendless")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let url = server.address("/pages/endless")
    let result = try cask.run(
      ["pull", "s", url, "--collection", "p", "--id-key", "id", "--max-pages", "12"], password: password,
      prefix: ["/usr/bin/timeout", "-s", "KILL", "60"])
    #expect(result.status == 1, "\(result.err)")
    #expect(
      result.err == "Error: '\(url)' has more than 12 pages (raise --max-pages if it should); nothing was written\n")
    #expect(try cask.run(["keys", "s"], password: password).out.isEmpty)
    let zero = try cask.run(["pull", "s", url, "--collection", "p", "--id-key", "id", "--max-pages", "0"])
    #expect(zero.status == 64, "\(zero.err)")
  }

  @Test("a next member that is no link is an error, not the last page", arguments: [#"2"#, #"{"href": "/x"}"#])
  func nextThatIsNoLink(next: String) async throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pullnext")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    try await server.put(file: "first", #"{"result": [{"id": "a"}], "next": \#(next)}"#)
    let result = try cask.run(
      [
        "pull", "s", server.address("/files/first"), "--collection", "c", "--id-key", "id", "--header",
        RESTServer.authorization,
      ], password: password)
    #expect(result.status == 1, "\(result.out)")
    #expect(result.err.hasPrefix("Error: invalid answer from"), "\(result.err)")
    #expect(result.err.hasSuffix("; nothing was written\n"), "\(result.err)")
  }

  /// Many APIs' 401 names the token, without the `Bearer ` of the header: only whole header
  /// values were replaced, so the token itself went into the message.
  @Test("a token the server echoes without its scheme is left out of the message")
  func echoedCredential() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pulltoken")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    for command in [
      ["pull", "s", server.address("/token-error"), "--collection", "c", "--id-key", "id"],
      ["import", "s", server.address("/token-error"), "--collection", "c", "--id-key", "id"],
    ] {
      let result = try cask.run(
        command + ["--header", "Authorization: Bearer sk-live-5f4e3d2c1b"], password: password)
      #expect(result.status == 1)
      #expect(result.err.contains("HTTP 401"), "\(result.err)")
      #expect(!result.err.contains("5f4e3d2c1b"), "\(result.err)")
    }
  }
}

import CaskTestSupport
import Foundation
import Testing

/// `cask pull` over pages (the library's side: Tests/CipherCaskSyncTests/PageWalkTests.swift):
/// pages that start over or never end stop it with one line and nothing written, and a next
/// link that is no link is an error, not the last page.
@Suite("cask pull over pages")
struct PullPagingTests {
  let password = "paging-pw"

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
      password: password, prefix: ["/usr/bin/timeout", "-s", "KILL", "300"])
    // `timeout` kills a walk that never ends (SIGKILL: the runner's children may inherit a
    // blocked SIGTERM); the bound is generous so that a slow machine does not look like one.
    #expect(result.status != 9, "still walking pages that start over after 300 s (killed)")
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
      prefix: ["/usr/bin/timeout", "-s", "KILL", "300"])
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
      ["pull", "s", server.address("/files/first"), "--collection", "c", "--id-key", "id"]
        + cask.headerFile(RESTServer.authorization), password: password)
    #expect(result.status == 1, "\(result.out)")
    #expect(result.err.hasPrefix("Error: invalid answer from"), "\(result.err)")
    #expect(result.err.hasSuffix("; nothing was written\n"), "\(result.err)")
  }

}

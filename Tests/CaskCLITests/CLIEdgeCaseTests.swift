import CaskTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Defects found by review of the `cask` tool (session 5), each pinned by the failure it prevents.
@Suite("cask at the edges: a cut batch line, a cut echoed header, Ctrl-C during decrypt, a lone CR")
struct CLIEdgeCaseTests {
  let password = "review-pw"

  @Test("an array error right after a committed batch names the line from which nothing was written")
  func importErrorAfterFullBatchNamesTheRightLine() throws {
    let cask = try CaskRunner("review-batchline")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    // Batches of 2: lines 2-3 and 4-5 are committed; line 6 lacks its comma.
    let input = "[\n{\"id\": 1},\n{\"id\": 2},\n{\"id\": 3},\n{\"id\": 4}\n{\"id\": 5}\n]\n"
    try Data(input.utf8).write(to: URL(fileURLWithPath: cask.path("a.json")))
    let result = try cask.run(
      ["import", "s", "a.json", "--collection", "c", "--id-key", "id", "--batch-size", "2"], password: password)
    #expect(result.status == 1)
    #expect(try cask.run(["keys", "s", "--collection", "c"], password: password).out == "1\n2\n3\n4\n")
    // Objects 3 and 4 (lines 4 and 5) are in the store: the message must not say that nothing
    // from line 4 on was written.
    #expect(
      result.err
        == "Error: invalid import at line 6 of 'a.json': expected ',' or ']' after an object of the array; "
        + "the 4 objects before line 6 were imported, nothing from that line on\n", "\(result.err)")
  }

  @Test("a header value cut by the 200-byte excerpt of a server's error is not shown in part")
  func headerValueCutByTheExcerptIsScrubbed() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("review-echo-cut")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    // /echo answers 400 with the request's headers; the excerpt ends inside this long value.
    let token = "tk" + String(repeating: "SECRETPART", count: 20)
    let result = try cask.run(
      ["pull", "s", server.address("/echo"), "--collection", "c", "--id-key", "id", "--header", "X-Token: \(token)"],
      password: password)
    #expect(result.status == 1)
    #expect(result.err.hasPrefix("Error: cannot pull from "), "\(result.err)")
    #expect(!result.err.contains("SECRETPART"), "\(result.err)")
  }

  @Test("a password line ending in a lone CR means the same from --password-file and --password-stdin")
  func passwordCarriageReturnIsReadAlikeEverywhere() throws {
    let cask = try CaskRunner("review-cr")
    defer { cask.remove() }
    try Data("pw-with-cr\r".utf8).write(to: URL(fileURLWithPath: cask.path("pw")))
    let created = try cask.run(["create", "s", "--password-file", "pw"])
    #expect(created.status == 0, "\(created.err)")
    #expect(try cask.run(["put", "s", "k", "--file", "pw", "--password-file", "pw"]).status == 0)
    let fromStdin = try cask.run(["get", "s", "k", "--password-stdin"], stdin: Data("pw-with-cr\r".utf8))
    #expect(fromStdin.status == 0, "\(fromStdin.err)")
  }
}

extension URL {
  fileprivate func creatingFile() -> URL {
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    return self
  }
}

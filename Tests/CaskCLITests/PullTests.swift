import CaskTestSupport
import Foundation
import Testing

/// `cask pull` and `cask import URL` against a real HTTP server on 127.0.0.1 (the Python REST
/// server of CipherCaskSync's tests): every object stored as the server sent it, headers on
/// every request and in no message, pages followed, and nothing written after any error.
@Suite("cask pull and import from a URL")
struct PullTests {
  let password = "pull-pw"

  /// u3 as the server sends it, byte for byte.
  static let u3 =
    #"{"id": "u3", "email": "u3@example.com", "first": "First3", "last": "Last3", "address": "#
    + #"{"street": "3 Main St", "city": "Springfield", "state": "IL", "zip": "62703"}}"#

  /// A failure: one `Error:` line with the expected start, exit 1, nothing on stdout, no token.
  func expectFailure(
    _ result: CaskResult, _ start: String, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(result.status == 1, sourceLocation: sourceLocation)
    #expect(result.err.hasPrefix("Error: \(start)"), "\(result.err)", sourceLocation: sourceLocation)
    #expect(result.err.hasSuffix("; nothing was written\n"), "\(result.err)", sourceLocation: sourceLocation)
    #expect(result.err.split(separator: "\n").count == 1, sourceLocation: sourceLocation)
    #expect(!result.err.contains(RESTServer.token), sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
  }

  func keys(_ cask: CaskRunner, _ collection: String) throws -> [String] {
    let result = try cask.run(["keys", "s", "--collection", collection], password: password)
    #expect(result.status == 0, "\(result.err)")
    return result.out.split(separator: "\n").map(String.init)
  }

  @Test("pull follows next links with the Authorization header and stores each object as sent")
  func pullPages() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pull")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let auth = try cask.headerFile(RESTServer.authorization)
    let pulled = try cask.run(
      ["pull", "s", server.address("/users"), "--collection", "users", "--id-key", "id"] + auth, password: password)
    #expect(pulled.status == 0, "\(pulled.err)")
    #expect(
      pulled.out
        == "Pulled 5 objects from '\(server.address("/users"))' into collection 'users' of store 's': 5 inserted, 0 replaced.\n"
    )
    #expect(pulled.stderr.isEmpty)
    #expect(try keys(cask, "users") == ["u1", "u2", "u3", "u4", "u5"])
    let u3 = try cask.run(["get", "s", "u3", "--collection", "users"], password: password)
    #expect(u3.out == Self.u3)

    // Page numbers instead of links (?page=1, 2, 3, then an empty page 4); a query of the URL,
    // which may hold a key, is kept on the requests and left out of messages.
    let paged = try cask.run(
      [
        "pull", "s", server.address("/users?api_key=query-secret"), "--collection", "users", "--id-key", "id",
        "--page-parameter", "page",
      ] + auth, password: password)
    #expect(paged.status == 0, "\(paged.err)")
    #expect(paged.out.hasSuffix(": 0 inserted, 5 replaced.\n"))
    #expect(paged.out.contains("'\(server.address("/users"))?…'") && !paged.out.contains("query-secret"))
  }

  @Test("without the Authorization header, or with a wrong one, pull fails with the status and writes nothing")
  func authorization() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pullauth")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let pull = ["pull", "s", server.address("/users"), "--collection", "users", "--id-key", "id"]
    let missing = try cask.run(pull, password: password)
    expectFailure(missing, "cannot pull from '\(server.address("/users"))': HTTP 401: {\"error\": \"unauthorized\"}")
    let wrong = try cask.run(
      pull + cask.headerFile("Authorization: Bearer wrong-secret-token"), password: password)
    expectFailure(wrong, "cannot pull from '\(server.address("/users"))': HTTP 401")
    #expect(!wrong.err.contains("wrong-secret-token"))
    #expect(try keys(cask, "users").isEmpty)
  }

  @Test("404 and 500 answers are clear one-line errors, and the store keeps what it had")
  func errorStatuses() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pullstatus")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let auth = try cask.headerFile(RESTServer.authorization)
    #expect(
      try cask.run(
        ["pull", "s", server.address("/users"), "--collection", "users", "--id-key", "id"] + auth, password: password
      )
      .status == 0)
    for (path, status) in [("/status/404", 404), ("/status/500", 500), ("/users/nobody", 404), ("/nothing", 404)] {
      let result = try cask.run(
        ["pull", "s", server.address(path), "--collection", "users", "--id-key", "id"] + auth, password: password)
      expectFailure(result, "cannot pull from '\(server.address(path))': HTTP \(status)")
    }
    let refused = try cask.run(
      ["pull", "s", "http://127.0.0.1:1/users", "--collection", "users", "--id-key", "id"], password: password)
    expectFailure(refused, "cannot pull from 'http://127.0.0.1:1/users': network failure: could not connect")
    #expect(try keys(cask, "users") == ["u1", "u2", "u3", "u4", "u5"])
  }

  /// Prevents URLSession following the 3xx and sending the `--header` values along, so that a
  /// token reached the other server.
  @Test("a redirect to another server is refused: it gets no request, nothing is written")
  func redirectElsewhere() async throws {
    let server = try RESTServer()
    let other = try RESTServer()
    defer {
      server.stop()
      other.stop()
    }
    let cask = try CaskRunner("pullredirect")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let target = "http://localhost:\(other.port)/users".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    let address = server.address("/redirect/302?to=\(target)")
    let result = try cask.run(
      ["pull", "s", address, "--collection", "users", "--id-key", "id"] + cask.headerFile(RESTServer.authorization),
      password: password)
    expectFailure(
      result, "cannot pull from '\(server.address("/redirect/302"))?…': network failure: the server redirected")
    #expect(try keys(cask, "users").isEmpty)
    #expect(try await other.authorizations().isEmpty, "the other server was sent a request")
  }

  @Test("malformed JSON, on the first page or a later one, writes nothing and names page and line")
  func malformed() async throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pullbad")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let auth = try cask.headerFile(RESTServer.authorization)
    let bad = try cask.run(
      ["pull", "s", server.address("/bad"), "--collection", "c", "--id-key", "id"], password: password)
    expectFailure(bad, "invalid answer from '\(server.address("/bad"))' (page 1): malformed JSON")
    // Page 1 is fine and links to /bad: its object is not written either.
    try await server.put(file: "first", #"{"result": [{"id": "a"}], "next": "/bad"}"#)
    let second = try cask.run(
      ["pull", "s", server.address("/files/first"), "--collection", "c", "--id-key", "id"] + auth, password: password)
    expectFailure(second, "invalid answer from '\(server.address("/files/first"))' (page 2): malformed JSON")
    // A next link to another server (port 1: were it followed, the error would be a failed
    // connection) is refused before any request, with the headers, goes there.
    try await server.put(file: "away", #"{"result": [{"id": "a"}], "next": "http://127.0.0.1:1/users"}"#)
    let away = try cask.run(
      ["pull", "s", server.address("/files/away"), "--collection", "c", "--id-key", "id"] + auth, password: password)
    expectFailure(
      away, "invalid answer from '\(server.address("/files/away"))' (page 1): its next link leads to another server")
    // An object without the id field, by its line.
    try await server.put(
      file: "lines", "{\"result\": [\n  {\"id\": \"a\"},\n  {\"id\": \"b\"},\n  {\"name\": \"c\"}\n]}")
    let noID = try cask.run(
      ["pull", "s", server.address("/files/lines"), "--collection", "c", "--id-key", "id"] + auth, password: password)
    expectFailure(
      noID, "invalid answer from '\(server.address("/files/lines"))' (page 1, line 4): the object has no 'id'")
    #expect(try keys(cask, "c").isEmpty)
  }

  @Test("pull takes a bare array, a bare object and a named envelope, byte for byte")
  func shapes() async throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pullshapes")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let auth = try cask.headerFile(RESTServer.authorization)
    try await server.put(file: "array", #"[{"id": 1, "n": 1.50}, {"id": 2}, {"id": 1, "n": "again"}]"#)
    try await server.put(file: "object", #"  {"id": "solo", "list": [1, 2]}  "#)
    try await server.put(file: "data", #"{"data": {"id": "in-data"}, "result": "not this"}"#)
    let array = try cask.run(
      ["pull", "s", server.address("/files/array"), "--collection", "c", "--id-key", "id"] + auth, password: password)
    #expect(array.out.hasSuffix("'c' of store 's': 2 inserted, 0 replaced.\n"), "\(array.err)")
    #expect(
      try cask.run(["get", "s", "1", "--collection", "c"], password: password).out == #"{"id": 1, "n": "again"}"#)
    #expect(try cask.run(["get", "s", "2", "--collection", "c"], password: password).out == #"{"id": 2}"#)
    let object = try cask.run(
      ["pull", "s", server.address("/files/object"), "--collection", "c", "--id-key", "id"] + auth, password: password)
    #expect(object.out.hasSuffix(": 1 inserted, 0 replaced.\n"), "\(object.err)")
    #expect(
      try cask.run(["get", "s", "solo", "--collection", "c"], password: password).out
        == #"{"id": "solo", "list": [1, 2]}"#)
    let enveloped = try cask.run(
      ["pull", "s", server.address("/files/data"), "--collection", "c", "--id-key", "id", "--envelope", "data"] + auth,
      password: password)
    #expect(enveloped.out.hasSuffix(": 1 inserted, 0 replaced.\n"), "\(enveloped.err)")
    #expect(try keys(cask, "c") == ["1", "2", "in-data", "solo"])
  }

  @Test("a header value echoed by the server is left out of the message")
  func echoedHeader() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pullecho")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let result = try cask.run(
      ["pull", "s", server.address("/echo"), "--collection", "c", "--id-key", "id"]
        + cask.headerFile(RESTServer.authorization, "X-Api-Key: key-9f8e7d"), password: password)
    expectFailure(result, "cannot pull from '\(server.address("/echo"))': HTTP 400")
    #expect(!result.err.contains("key-9f8e7d") && !result.err.contains("Bearer"), "\(result.err)")
  }

  @Test("import reads a URL like a file: headers, line numbers, batches, and nothing written after a failed download")
  func importURL() async throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("importurl")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let auth = try cask.headerFile(RESTServer.authorization)
    try await server.put(file: "good.jsonl", (1...5).map { "{\"id\": \"e\($0)\", \"n\": \($0)}\n" }.joined())
    try await server.put(file: "bad.jsonl", "{\"id\": 1}\n{\"id\": 2}\n{\"id\": 3}\n{\"id\": \n{\"id\": 5}\n")
    let url = server.address("/files/good.jsonl")
    let imported = try cask.run(["import", "s", url, "--collection", "e", "--id-key", "id"] + auth, password: password)
    #expect(imported.status == 0, "\(imported.err)")
    #expect(imported.out == "Imported 5 objects into collection 'e' of store 's': 5 inserted, 0 replaced.\n")
    #expect(try cask.run(["get", "s", "e3", "--collection", "e"], password: password).out == #"{"id": "e3", "n": 3}"#)

    let unauthorized = try cask.run(["import", "s", url, "--collection", "u", "--id-key", "id"], password: password)
    expectFailure(unauthorized, "cannot download '\(url)': HTTP 401")
    let missing = try cask.run(
      ["import", "s", server.address("/files/none"), "--collection", "u", "--id-key", "id"] + auth, password: password)
    expectFailure(missing, "cannot download '\(server.address("/files/none"))': HTTP 404")
    let malformed = try cask.run(
      ["import", "s", server.address("/bad"), "--collection", "u", "--id-key", "id"], password: password)
    #expect(
      malformed.err
        == "Error: invalid import at line 1 of '\(server.address("/bad"))': malformed JSON; nothing was written\n")
    #expect(try keys(cask, "u").isEmpty)

    // Batches of 2: lines 1-2 are written, the batch of lines 3-4 is not.
    let half = try cask.run(
      ["import", "s", server.address("/files/bad.jsonl"), "--collection", "b", "--id-key", "id", "--batch-size", "2"]
        + auth,
      password: password)
    #expect(half.status == 1)
    #expect(
      half.err
        == "Error: invalid import at line 4 of '\(server.address("/files/bad.jsonl"))': malformed JSON; the 2 objects before "
        + "line 3 were imported, nothing from that line on\n")
    #expect(try keys(cask, "b") == ["1", "2"])

    let headerForFile = try cask.run(
      ["import", "s", "local.jsonl", "--collection", "b", "--id-key", "id"] + auth, password: password)
    #expect(headerForFile.status == 64 && headerForFile.err.contains("--header and --header-file are for downloads"))
    #expect(!headerForFile.err.contains(RESTServer.token))
  }

  @Test("pull refuses a URL that is not http(s) and a malformed header, without quoting either")
  func usage() throws {
    let cask = try CaskRunner("pullusage")
    defer { cask.remove() }
    let notHTTP = try cask.run(["pull", "s", "ftp://host/x?token=abc123", "--collection", "c", "--id-key", "id"])
    #expect(notHTTP.status == 64 && notHTTP.err.hasPrefix("Error: <url> must be an http:// or https:// URL"))
    #expect(!notHTTP.err.contains("abc123"))
    for header in ["Bearer abc123", "Authorization: Bearer abc123\r\nX: y", "Bad Name: abc123"] {
      let result = try cask.run([
        "pull", "s", "http://127.0.0.1:1/", "--collection", "c", "--id-key", "id", "--header", header,
      ])
      #expect(result.status == 64, "\(header.debugDescription): \(result.err)")
      #expect(result.err.hasPrefix("Error: The value of '--header <header>' must be 'Name: value'"))
      #expect(!result.err.contains("abc123"))
    }
  }

  @Test("on a terminal, pull shows a bar counting objects and erases it")
  func progress() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pullbar")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let result = try cask.runWithTerminalStderr(
      ["pull", "s", server.address("/users"), "--collection", "users", "--id-key", "id"]
        + cask.headerFile(RESTServer.authorization),
      password: password, environment: ["CASK_PROGRESS_DELAY": "0"])
    #expect(result.status == 0, "\(result.err)")
    #expect(result.err.hasPrefix("\rPulling "), "\(result.err.debugDescription)")
    #expect(result.err.contains("objects"))
    #expect(result.err.hasSuffix("\r\u{1B}[K"), "the bar is not erased")
    #expect(result.out.hasSuffix(": 5 inserted, 0 replaced.\n"))
  }

  @Test("a header value cut by the 200-byte excerpt of a server's error is not shown in part")
  func headerValueCutByTheExcerptIsScrubbed() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pull-echo-cut")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    // /echo answers 400 with the request's headers; the excerpt ends inside this long value.
    let token = "tk" + String(repeating: "SECRETPART", count: 20)
    let result = try cask.run(
      ["pull", "s", server.address("/echo"), "--collection", "c", "--id-key", "id"]
        + cask.headerFile("X-Token: \(token)"),
      password: password)
    #expect(result.status == 1)
    #expect(result.err.hasPrefix("Error: cannot pull from "), "\(result.err)")
    #expect(!result.err.contains("SECRETPART"), "\(result.err)")
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
        command + cask.headerFile("Authorization: Bearer sk-live-5f4e3d2c1b"), password: password)
      #expect(result.status == 1)
      #expect(result.err.contains("HTTP 401"), "\(result.err)")
      #expect(!result.err.contains("5f4e3d2c1b"), "\(result.err)")
    }
  }
}

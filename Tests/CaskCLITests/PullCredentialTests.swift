import CaskTestSupport
import Foundation
import Testing

/// How `pull` and `import URL` take and guard credentials: headers from a file or the
/// environment instead of the command line, a warning for a token given with `--header`, no
/// URL with a user or password, no credential over plain http to another machine without
/// `--allow-insecure-http`, and a size limit on answers.
@Suite("cask pull: credentials and answer sizes")
struct PullCredentialTests {
  let password = "pull-credential-pw"

  func pull(_ cask: CaskRunner, _ url: String, _ more: [String] = [], environment: [String: String] = [:]) throws
    -> CaskResult
  {
    try cask.run(
      ["pull", "s", url, "--collection", "users", "--id-key", "id"] + more, password: password,
      environment: environment)
  }

  func keys(_ cask: CaskRunner) throws -> [String] {
    try cask.run(["keys", "s", "--collection", "users"], password: password).out.split(separator: "\n").map(
      String.init)
  }

  @Test("headers come from --header-file (comments and blank lines skipped) and from CASK_PULL_HEADERS")
  func headersFromFileAndEnvironment() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pull-header-sources")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let file = cask.path("headers")
    try Data("# the API token\n\n  \(RESTServer.authorization)\r\nAccept-Language: en\n".utf8).write(
      to: URL(fileURLWithPath: file))
    chmod(file, 0o600)
    let fromFile = try pull(cask, server.address("/users"), ["--header-file", "headers"])
    #expect(fromFile.status == 0, "\(fromFile.err)")
    #expect(fromFile.stderr.isEmpty, "\(fromFile.err)")
    #expect(try keys(cask).count == 5)

    let fromEnvironment = try pull(
      cask, server.address("/users"), environment: ["CASK_PULL_HEADERS": "X-Trace: 1\n\(RESTServer.authorization)"])
    #expect(fromEnvironment.status == 0, "\(fromEnvironment.err)")
    #expect(fromEnvironment.out.hasSuffix(": 0 inserted, 5 replaced.\n"))
    #expect(fromEnvironment.stderr.isEmpty, "\(fromEnvironment.err)")
  }

  @Test("a malformed line of a header file or of CASK_PULL_HEADERS is named by number, never shown")
  func malformedHeaderLine() throws {
    let cask = try CaskRunner("pull-header-line")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let file = cask.path("headers")
    try Data("# token\n\(RESTServer.authorization)\nBearer sk-bad-line-value\n".utf8).write(
      to: URL(fileURLWithPath: file))
    chmod(file, 0o600)
    let result = try pull(cask, "http://127.0.0.1:1/users", ["--header-file", "headers"])
    #expect(result.status == 1)
    #expect(
      result.err == "Error: the header file 'headers', line 3: not a 'Name: value' header "
        + "(a token name, a colon, printable ASCII)\n")
    let variable = try pull(
      cask, "http://127.0.0.1:1/users", environment: ["CASK_PULL_HEADERS": "X-A: 1\nX-B: sk-ctl\u{7}value"])
    #expect(variable.status == 1)
    #expect(variable.err.hasPrefix("Error: CASK_PULL_HEADERS, line 2: not a 'Name: value' header"), "\(variable.err)")
    for text in [result.err, variable.err] {
      #expect(!text.contains("sk-") && !text.contains(RESTServer.token), "\(text)")
    }
    let missing = try pull(cask, "http://127.0.0.1:1/users", ["--header-file", "absent"])
    #expect(
      missing.status == 1 && missing.err == "Error: cannot read the header file 'absent': No such file or directory\n")
  }

  @Test("a header file that its group or others can read gets a warning, and is still used")
  func sharedHeaderFile() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pull-header-mode")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let file = cask.path("headers")
    try Data("\(RESTServer.authorization)\n".utf8).write(to: URL(fileURLWithPath: file))
    chmod(file, 0o644)
    let result = try pull(cask, server.address("/users"), ["--header-file", "headers"])
    #expect(result.status == 0, "\(result.err)")
    #expect(
      result.err == "warning: the header file 'headers' can be read by its group and others (mode 0644): chmod 600 it\n"
    )
  }

  @Test("--header still works, with a warning naming (only) a credential header: ps shows it")
  func credentialOnTheCommandLineWarns() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pull-header-warning")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let warned = try pull(cask, server.address("/users"), ["--header", RESTServer.authorization])
    #expect(warned.status == 0, "\(warned.err)")
    #expect(
      warned.err
        == "warning: --header 'Authorization' is visible to every user of this machine (ps, /proc/PID/cmdline); "
        + "give it in --header-file or CASK_PULL_HEADERS instead\n")
    for name in ["Cookie", "X-Api-Key", "X-Auth-Token"] {
      let result = try pull(
        cask, server.address("/users"), ["--header", "\(name): v-123456"] + cask.headerFile(RESTServer.authorization))
      #expect(result.err.contains("warning: --header '\(name)'") && !result.err.contains("v-123456"), "\(result.err)")
    }
    let plain = try pull(
      cask, server.address("/users"), ["--header", "Accept-Language: en"] + cask.headerFile(RESTServer.authorization))
    #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain.err)")
  }

  @Test("a URL with a user or password is refused without showing it, also as a redirect's target")
  func credentialsInURL() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pull-url-credentials")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let basic = Data("alice:hunter2-secret".utf8).base64EncodedString()
    for url in [
      "http://alice:hunter2-secret@127.0.0.1:\(server.port)/users", "http://alice@127.0.0.1:\(server.port)/users",
      "https://:hunter2-secret@127.0.0.1:\(server.port)/users",
    ] {
      for command in ["pull", "import"] {
        let result = try cask.run(
          [command, "s", url, "--collection", "users", "--id-key", "id"], password: password)
        #expect(result.status == 64, "\(url): \(result.err)")
        #expect(result.err.hasPrefix("Error: <\(command == "pull" ? "url" : "file")> holds a user name or password"))
        #expect(!result.err.contains("hunter2") && !result.err.contains("alice") && !result.err.contains(basic))
      }
    }
    // A redirect to the same server with a user and password: not followed, so URLSession
    // sends no derived Basic header for /echo to repeat.
    let target = "http://alice:hunter2-secret@127.0.0.1:\(server.port)/echo"
      .addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    let redirected = try pull(
      cask, server.address("/redirect/302?to=\(target)"), cask.headerFile(RESTServer.authorization))
    #expect(redirected.status == 1)
    #expect(
      redirected.err.hasPrefix(
        "Error: cannot pull from '\(server.address("/redirect/302"))?…': the URL holds a user name or password"),
      "\(redirected.err)")
    #expect(!redirected.err.contains("hunter2") && !redirected.err.contains(basic))
    #expect(try keys(cask).isEmpty)
  }

  @Test("the user and password of a Basic header, echoed decoded by the server, are left out")
  func echoedBasicCredential() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pull-basic-echo")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let basic = Data("alice:hunter2-secret".utf8).base64EncodedString()
    let result = try pull(cask, server.address("/basic-error"), cask.headerFile("Authorization: Basic \(basic)"))
    #expect(result.status == 1)
    #expect(result.err.contains("HTTP 401"), "\(result.err)")
    #expect(!result.err.contains("hunter2") && !result.err.contains(basic), "\(result.err)")
  }

  /// 0.0.0.0 reaches this machine on Linux but is not a loopback name: it stands for any
  /// address of another host, without a request leaving the machine.
  @Test("credentials over plain http to a host that is not loopback need --allow-insecure-http")
  func plainHTTPCredentials() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pull-insecure")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let url = "http://0.0.0.0:\(server.port)/users"
    let refused = try pull(cask, url, cask.headerFile(RESTServer.authorization))
    #expect(refused.status == 1)
    #expect(
      refused.err
        == "Error: cannot pull from '\(url)': not sending a credential header over plain http:// to '0.0.0.0' "
        + "(use https://, or allow insecure http explicitly); nothing was written\n")
    #expect(try keys(cask).isEmpty)
    let allowed = try pull(cask, url, cask.headerFile(RESTServer.authorization) + ["--allow-insecure-http"])
    #expect(allowed.status == 0, "\(allowed.err)")
    #expect(try keys(cask).count == 5)
    // Without a credential header there is nothing to protect.
    let open = try pull(cask, "http://0.0.0.0:\(server.port)/bad")
    #expect(open.err.contains("malformed JSON"), "\(open.err)")
  }

  @Test("an answer larger than --max-response-size fails with one line and writes nothing")
  func answerSizeLimit() async throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("pull-size")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let objects = (1...40).map { #"{"id": "u\#($0)", "pad": "\#(String(repeating: "x", count: 50))"}"# }
    let body = "[" + objects.joined(separator: ", ") + "]"
    try await server.put(file: "big", body)
    let url = server.address("/files/big")
    let auth = try cask.headerFile(RESTServer.authorization)
    let tooLarge = try pull(cask, url, auth + ["--max-response-size", "1000"])
    #expect(tooLarge.status == 1)
    #expect(
      tooLarge.err
        == "Error: cannot pull from '\(url)': the answer is larger than 1000 bytes, the most accepted; nothing was written\n"
    )
    #expect(try keys(cask).isEmpty)
    let fits = try pull(cask, url, auth + ["--max-response-size", String(body.utf8.count)])
    #expect(fits.status == 0, "\(fits.err)")
    #expect(try keys(cask).count == 40)
    let zero = try pull(cask, url, auth + ["--max-response-size", "0"])
    #expect(zero.status == 64)
  }
}

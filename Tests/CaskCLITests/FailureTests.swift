import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Each way a store can fail to open gets its own one-line message naming the store, exit
/// status 1, and never a secret or a stack trace.
@Suite("cask failures")
struct FailureTests {
  let password = "s3cret-Password"

  /// A one-line `Error:` message on stderr, nothing on stdout, exit 1, no secret.
  func expectOneLineFailure(_ result: CaskResult, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation)
  {
    #expect(result.status == 1, sourceLocation: sourceLocation)
    #expect(result.err == "Error: \(expected)\n", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
    #expect(!result.err.contains(password), sourceLocation: sourceLocation)
  }

  @Test("a wrong password is refused with its own message, for every store command")
  func wrongPassword() throws {
    let cask = try CaskRunner("wrongpw")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    #expect(try cask.run(["put", "s", "secret-key"], password: password, stdin: Data("v".utf8)).status == 0)
    let commands = [
      ["get", "s", "secret-key"], ["put", "s", "k", "--file", "/dev/null"], ["delete", "s", "secret-key"],
      ["keys", "s"],
      ["stats", "s"], ["verify", "s"], ["compact", "s"], ["export", "s", "out"],
    ]
    for command in commands {
      let result = try cask.run(command, password: "not-the-password")
      expectOneLineFailure(result, "wrong password for store 's'")
      #expect(!result.err.contains("not-the-password") && !result.err.contains("secret-key"))
    }
    #expect(!FileManager.default.fileExists(atPath: cask.path("out")), "export wrote before the password checked")
    #expect(try cask.run(["get", "s", "secret-key"], password: password).out == "v")
  }

  @Test("a missing store is reported as missing, and not created, by every command but create and demo")
  func missingStore() throws {
    let cask = try CaskRunner("missing")
    defer { cask.remove() }
    let commands = [
      ["get", "nowhere", "k"], ["put", "nowhere", "k", "--file", "/dev/null"], ["delete", "nowhere", "k"],
      ["keys", "nowhere"], ["stats", "nowhere"], ["verify", "nowhere"], ["compact", "nowhere"], ["passwd", "nowhere"],
      ["export", "nowhere", "out"], ["import", "nowhere", "-", "--collection", "c", "--id-key", "id"],
    ]
    for command in commands {
      // No password source at all: the store's absence is reported before one is needed.
      let result = try cask.run(command)
      expectOneLineFailure(result, "store 'nowhere' does not exist (make one with 'cask create nowhere')")
      #expect(!FileManager.default.fileExists(atPath: cask.path("nowhere")))
    }
    try FileManager.default.createDirectory(atPath: cask.path("plain"), withIntermediateDirectories: false)
    expectOneLineFailure(try cask.run(["keys", "plain"], password: password), "'plain' is not a CipherCask store")
  }

  @Test("a store held open by another process is reported as locked")
  func lockedStore() throws {
    let cask = try CaskRunner("locked")
    defer { cask.remove() }
    let path = try cask.createStore("s", password: password)
    // This test process holds the store's exclusive lock; the child cask cannot take it.
    let holder = try CaskStore(path: path, password: password, options: CaskStore.Options(createIfMissing: false))
    defer { try? holder.close() }
    for command in [["get", "s", "k"], ["keys", "s"], ["put", "s", "k", "--file", "/dev/null"], ["stats", "s"]] {
      expectOneLineFailure(
        try cask.run(command, password: password), "store 's' is locked: another process has it open")
    }
    try holder.close()
    #expect(try cask.run(["keys", "s"], password: password).status == 0)
  }

  @Test("a damaged header is reported as damage, naming the store and the file")
  func damagedStore() throws {
    let cask = try CaskRunner("damaged")
    defer { cask.remove() }
    let path = try cask.createStore("s", password: password)
    try FileDamage.flipByte(at: 20, in: "\(path)/\(CaskFormat.headerFileName)")
    let result = try cask.run(["stats", "s"], password: password)
    expectOneLineFailure(result, "store 's' is damaged: its header (CASK) does not read: header checksum mismatch")
  }

  @Test("a damaged record makes verify exit 1 with the file and offset, in text and JSON")
  func damagedRecord() throws {
    let cask = try CaskRunner("damaged-record")
    defer { cask.remove() }
    let path = try cask.createStore("s", password: password)
    for index in 0..<5 {
      #expect(
        try cask.run(["put", "s", "k\(index)"], password: password, stdin: Data(repeating: 7, count: 200)).status == 0)
    }
    let segment = try #require(
      try FileManager.default.contentsOfDirectory(atPath: path).first {
        $0.hasSuffix(".\(CaskFormat.segmentExtension)")
      })
    let size = try FileDamage.size(of: "\(path)/\(segment)")
    try FileDamage.flipByte(at: size - 40, in: "\(path)/\(segment)")

    let text = try cask.run(["verify", "s"], password: password)
    #expect(text.status == 1)
    #expect(text.out.contains("\(segment) at offset "))
    #expect(text.err == "Error: store 's' is damaged: 1 damaged region\n")
    let json = try cask.run(["verify", "s", "--json"], password: password)
    #expect(json.status == 1)
    let report = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
    #expect(report["clean"] as? Bool == false)
    let damage = try #require(report["damage"] as? [[String: Any]])
    #expect(damage.count == 1)
    #expect(damage.first?["file"] as? String == segment)
    #expect(damage.first?["offset"] is Int)
  }

  /// Prevents read-only commands saying "repaired", again on every run, while only a command
  /// that writes cuts the torn tail.
  @Test("a torn tail: read-only commands warn that nothing was repaired, the first write repairs it")
  func tornTailWarnings() throws {
    let cask = try CaskRunner("torn-warning")
    defer { cask.remove() }
    let path = try cask.createVersion2Store("s", password: password)
    for index in 0..<3 {
      #expect(try cask.run(["put", "s", "k\(index)"], password: password, stdin: Data("v\(index)".utf8)).status == 0)
    }
    let segment = try #require(
      try FileManager.default.contentsOfDirectory(atPath: path).first {
        $0.hasSuffix(".\(CaskFormat.segmentExtension)")
      })
    // The store was closed cleanly (a hint for no segment: the last one is scanned); cutting
    // into the last record leaves a torn tail.
    try FileDamage.truncate("\(path)/\(segment)", to: try FileDamage.size(of: "\(path)/\(segment)") - 10)
    let readOnly = "warning: store 's' is damaged (opened read-only: nothing was repaired) ("
    for _ in 0..<2 {
      let stats = try cask.run(["stats", "s"], password: password)
      #expect(stats.status == 0)
      #expect(stats.err.hasPrefix(readOnly), "\(stats.err)")
      // Not "cut": nothing was.
      #expect(stats.err.contains("bytes of a torn tail left unread"), "\(stats.err)")
      #expect(stats.out.contains("torn tail (left unread): "), "\(stats.out)")
    }
    let put = try cask.run(["put", "s", "k9"], password: password, stdin: Data("v9".utf8))
    #expect(put.status == 0)
    #expect(put.err.hasPrefix("warning: store 's' was damaged and repaired when opened ("), "\(put.err)")
    #expect(put.err.contains("bytes of a torn tail cut"), "\(put.err)")
    let after = try cask.run(["stats", "s"], password: password)
    #expect(after.err.isEmpty, "\(after.err)")
  }

  /// Prevents a writable open calling every damage "repaired", also an unreadable segment it
  /// only left out, and verify's summary counting intact records as if they were all it
  /// checked.
  @Test("damage an open does not repair is not called repaired; verify's summary counts intact records")
  func unrepairedDamageWording() throws {
    let cask = try CaskRunner("unrepaired")
    defer { cask.remove() }
    let path = try cask.createStore("s", password: password)
    #expect(try cask.run(["put", "s", "k"], password: password, stdin: Data("v".utf8)).status == 0)
    try Data("not a segment".utf8).write(to: URL(fileURLWithPath: "\(path)/0000002A.seg"))
    let put = try cask.run(["put", "s", "k2"], password: password, stdin: Data("v2".utf8))
    #expect(put.status == 0)
    #expect(put.err.hasPrefix("warning: store 's' is damaged (1 unreadable segment left out); "), "\(put.err)")
    let verify = try cask.run(["verify", "s"], password: password)
    #expect(verify.out.hasPrefix("Checked "), "\(verify.out)")
    #expect(verify.out.contains("records intact, "), "\(verify.out)")
  }

  @Test("without any password source and without a terminal, commands fail at once")
  func noPasswordNoTerminal() throws {
    let cask = try CaskRunner("nopw")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let expected =
      "no password: give --password-file, set CASK_PASSWORD or use --password-stdin (no terminal to prompt on)"
    expectOneLineFailure(try cask.run(["keys", "s"]), expected)
    expectOneLineFailure(try cask.run(["create", "t"]), expected)
    #expect(!FileManager.default.fileExists(atPath: cask.path("t")))
    try Data().write(to: URL(fileURLWithPath: cask.path("empty.txt")))
    chmod(cask.path("empty.txt"), 0o600)  // a shared password file would get a warning first
    expectOneLineFailure(
      try cask.run(["keys", "s", "--password-file", "empty.txt"]),
      "the password from the password file 'empty.txt' is empty")
  }
}

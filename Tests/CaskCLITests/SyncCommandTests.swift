import CaskTestSupport
import Foundation
import Testing

/// `cask sync` against a real Kinto on 127.0.0.1: objects imported without a Swift type travel
/// between two stores both ways, deletions too; credentials appear in no message.
@Suite("cask sync with Kinto")
struct SyncCommandTests {
  let password = "sync-pw"

  func sync(_ cask: CaskRunner, _ store: String, _ kinto: KintoProcess, _ extra: [String] = []) throws -> CaskResult {
    try cask.run(
      ["sync", store, kinto.url.absoluteString, "--bucket", "cli", "--collection", "events", "--auth-file", "auth"]
        + extra, password: password)
  }

  @Test("two stores converge through the server: imports, edits and deletes, with --json")
  func twoStores() throws {
    let kinto = try KintoProcess()
    let cask = try CaskRunner("sync")
    defer { cask.remove() }
    try Data("\(KintoProcess.user):\(KintoProcess.password)\n".utf8).write(to: URL(fileURLWithPath: cask.path("auth")))
    _ = try cask.createStore("a", password: password)
    _ = try cask.createStore("b", password: password)
    let events = #"[{"uid": "e1", "city": "Lyon", "n": 1}, {"uid": "e2", "city": "Oslo", "n": 2.5}]"#
    try Data(events.utf8).write(to: URL(fileURLWithPath: cask.path("events.json")))
    let imported = try cask.run(
      ["import", "a", "events.json", "--collection", "events", "--id-key", "uid"], password: password)
    #expect(imported.status == 0, "\(imported.err)")

    let first = try sync(cask, "a", kinto)
    #expect(first.status == 0, "\(first.err)")
    #expect(first.out.hasSuffix(": 0 pulled, 0 deleted, 2 pushed.\n"), "\(first.out)")
    let second = try sync(cask, "b", kinto, ["--json"])
    #expect(second.status == 0, "\(second.err)")
    let report = try JSONSerialization.jsonObject(with: second.stdout) as? [String: Any]
    #expect(report?["pulled"] as? Int == 2)
    #expect(report?["pending"] as? Int == 0)
    #expect(report?["fullResync"] as? Bool == true)
    let e2 = try cask.run(["get", "b", "e2", "--collection", "events"], password: password)
    let object = try JSONSerialization.jsonObject(with: e2.stdout) as? [String: Any]
    #expect(object?["city"] as? String == "Oslo")
    #expect(object?["n"] as? Double == 2.5)

    let deleted = try cask.run(["delete", "b", "e1", "--collection", "events"], password: password)
    #expect(deleted.status == 0, "\(deleted.err)")
    #expect(try sync(cask, "b", kinto).out.hasSuffix(": 0 pulled, 0 deleted, 1 pushed.\n"))
    let back = try sync(cask, "a", kinto)
    #expect(back.out.hasSuffix(": 0 pulled, 1 deleted, 0 pushed.\n"), "\(back.out)")
    let keys = try cask.run(["keys", "a", "--collection", "events"], password: password)
    #expect(keys.out == "e2\n")
    for result in [first, second, back] { #expect(!result.out.contains(KintoProcess.password)) }
  }

  @Test("a wrong password, a bad auth file and an unreachable server: one line, exit 1, no credential")
  func failures() throws {
    let kinto = try KintoProcess()
    let cask = try CaskRunner("syncfail")
    defer { cask.remove() }
    _ = try cask.createStore("a", password: password)
    try Data("no colon here\n".utf8).write(to: URL(fileURLWithPath: cask.path("auth")))
    let malformed = try sync(cask, "a", kinto)
    #expect(malformed.status == 1)
    #expect(malformed.err == "Error: the auth file 'auth' must hold 'user:password' on its first line\n")
    #expect(!malformed.err.contains("no colon here"))

    // Kinto's basic auth takes any user and password as an identity: a wrong password is
    // another user, refused by the bucket a first device made.
    try Data("\(KintoProcess.user):\(KintoProcess.password)\n".utf8).write(to: URL(fileURLWithPath: cask.path("auth")))
    #expect(try sync(cask, "a", kinto).status == 0)
    _ = try cask.createStore("b", password: password)
    try Data("\(KintoProcess.user):wrong-secret-password\n".utf8).write(to: URL(fileURLWithPath: cask.path("auth")))
    let refused = try sync(cask, "b", kinto)
    #expect(refused.status == 1)
    #expect(refused.err.hasPrefix("Error: cannot sync with '\(kinto.url.absoluteString)': HTTP 403"), "\(refused.err)")
    #expect(!refused.err.contains("wrong-secret-password"))
    #expect(refused.err.split(separator: "\n").count == 1)

    let port = try KintoProcess.freePort()
    let offline = try cask.run(
      ["sync", "a", "http://127.0.0.1:\(port)/v1", "--bucket", "cli", "--collection", "events", "--auth-file", "auth"],
      password: password)
    #expect(offline.status == 1)
    #expect(offline.err.contains("network failure: could not connect to the server"), "\(offline.err)")
  }
}

extension SyncCommandTests {
  @Test("a cask sync killed with SIGKILL in the middle of its pushes loses nothing: the next sync finishes the work")
  func killedMidSync() async throws {
    let kinto = try KintoProcess(batchLimit: 4)
    let proxy = try FaultProxy(targetPort: kinto.port)
    let cask = try CaskRunner("synckill")
    defer { cask.remove() }
    try Data("\(KintoProcess.user):\(KintoProcess.password)\n".utf8).write(to: URL(fileURLWithPath: cask.path("auth")))
    _ = try cask.createStore("a", password: password)
    let objects = (0..<40).map { #"{"uid": "k\#($0)", "n": \#($0)}"# }.joined(separator: ",")
    try Data("[\(objects)]".utf8).write(to: URL(fileURLWithPath: cask.path("objects.json")))
    let imported = try cask.run(
      ["import", "a", "objects.json", "--collection", "events", "--id-key", "uid"], password: password)
    #expect(imported.status == 0, "\(imported.err)")
    // Each batch of 4 takes half a second: ten of them, killed once the first is on the server.
    try await proxy.add(rule: ["delay": 0.5, "match": "/batch"])
    let arguments = [
      "sync", "a", proxy.url.absoluteString, "--bucket", "cli", "--collection", "events", "--auth-file", "auth",
    ]
    let child = try cask.process(arguments, password: password)
    child.standardOutput = FileHandle.nullDevice
    child.standardError = FileHandle.nullDevice
    try child.run()
    // Waits for the first batch, not for a guessed time: on a loaded machine a fixed sleep let
    // the whole sync end before the kill.
    let server = KintoHTTP(kinto.url, bucket: "cli", collection: "events")
    let started = try await eventually(timeout: 60, interval: 0.02) {
      guard child.isRunning else { return true }
      return (try? await server.records().count).map { $0 > 0 } == true
    }
    #expect(started, "the sync never pushed a batch")
    kill(child.processIdentifier, SIGKILL)
    child.waitUntilExit()
    #expect(child.terminationReason == .uncaughtSignal)
    let partial = try await server.records().count
    #expect(partial > 0 && partial < 40, "killed in the middle: \(partial) of 40 on the server")

    let again = try cask.run(arguments + ["--json"], password: password)
    #expect(again.status == 0, "\(again.err)")
    let report = try JSONSerialization.jsonObject(with: again.stdout) as? [String: Any]
    #expect(report?["pending"] as? Int == 0)
    #expect(try await server.records().count == 40)
  }
}

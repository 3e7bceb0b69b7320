import CaskTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Standard streams that are closed at startup, or a terminal that hangs up mid-command.
@Suite("cask with closed or hung-up standard streams")
struct ClosedStreamTests {
  let password = "closed-pw"

  /// Runs the command under `/bin/sh -c 'exec "$@" REDIRECTIONS'`, e.g. `<&-` to close stdin.
  private func shell(_ redirections: String) -> [String] {
    ["/bin/sh", "-c", "exec \"$@\" \(redirections)", "sh"]
  }

  @Test("with stdout and stderr closed, the repair warning does not land in a segment: the store keeps every key")
  func closedOutputsKeepTheStore() throws {
    let cask = try CaskRunner("closed-outputs")
    defer { cask.remove() }
    let store = try cask.createVersion2Store("s", password: password)
    for index in 1...3 {
      let put = try cask.run(["put", "s", "k\(index)"], password: password, stdin: Data("v\(index)".utf8))
      #expect(put.status == 0, "\(put.err)")
    }
    // A torn tail: the next read-write open cuts it and warns on standard error.
    var random = SeededRandom.make(test: "cli closed outputs")
    let segment = try FileHandle(forWritingTo: URL(fileURLWithPath: store + "/00000001.seg"))
    try segment.seekToEnd()
    try segment.write(contentsOf: random.bytes(40))
    try segment.close()

    let put = try cask.run(
      ["put", "s", "k4"], password: password, stdin: Data("new".utf8), prefix: shell(">&- 2>&-"))
    #expect(put.status == 0)
    let keys = try cask.run(["keys", "s"], password: password)
    #expect(keys.status == 0, "\(keys.err)")
    #expect(keys.out == "k1\nk2\nk3\nk4\n")
    #expect(try cask.run(["get", "s", "k4"], password: password).out == "new")
  }

  @Test("with stdin closed, put refuses instead of storing an empty value")
  func putWithClosedStdin() throws {
    let cask = try CaskRunner("closed-stdin-put")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let put = try cask.run(["put", "s", "k"], password: password, prefix: shell("<&-"))
    #expect(put.status == 1)
    #expect(put.err == "Error: standard input is closed\n")
    let get = try cask.run(["get", "s", "k"], password: password)
    #expect(get.status == 1, "a value was stored: \(get.out)")
  }

  @Test("with stdin closed, import - and --password-stdin refuse instead of reading nothing")
  func importAndPasswordWithClosedStdin() throws {
    let cask = try CaskRunner("closed-stdin-import")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let imported = try cask.run(
      ["import", "s", "-", "--collection", "c", "--id-key", "id"], password: password, prefix: shell("<&-"))
    #expect(imported.status == 1)
    #expect(imported.err.hasPrefix("Error: standard input is closed"), "\(imported.err)")
    #expect(imported.out.isEmpty)

    try Data("v".utf8).write(to: URL(fileURLWithPath: cask.path("value")))
    let put = try cask.run(
      ["put", "s", "k", "--file", "value", "--password-stdin"], prefix: shell("<&-"))
    #expect(put.status == 1)
    #expect(put.err == "Error: standard input is closed\n")
  }

  @Test("a terminal that hangs up during decrypt stops the bar, not the command: OUT is complete, no partial file")
  func hungUpTerminalDuringDecrypt() throws {
    let cask = try CaskRunner("hangup")
    defer { cask.remove() }
    // Large enough that decrypting outlasts the first frame's trip to the test and back.
    let plain = Data(repeating: 0x5A, count: 48 << 20)
    try plain.write(to: URL(fileURLWithPath: cask.path("plain")))
    let sealed = try cask.run(["encrypt", "plain", "sealed"], password: password)
    #expect(sealed.status == 0, "\(sealed.err)")

    let status = try runHangingUpStderr(
      cask, ["decrypt", "sealed", "opened"], environment: ["CASK_PROGRESS_DELAY": "0"])
    #expect(status == 0)
    #expect(try Data(contentsOf: URL(fileURLWithPath: cask.path("opened"))) == plain)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: cask.directory.path)
      .filter { $0.hasSuffix(".partial") }
    #expect(leftovers.isEmpty, "\(leftovers)")
  }

  /// Runs `cask` with standard error on a pseudo-terminal and closes the terminal's other side
  /// as soon as the first bytes (the bar's first frame) arrive, as a closed terminal window
  /// does; later writes to standard error then fail with EIO. Returns the exit status.
  private func runHangingUpStderr(_ cask: CaskRunner, _ arguments: [String], environment: [String: String])
    throws -> Int32
  {
    let pair = try CaskRunner.openPseudoTerminal()
    var master = pair.master
    let terminal = pair.terminal
    defer { if master >= 0 { close(master) } }
    let process = try cask.process(arguments, password: password, environment: environment)
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle(fileDescriptor: terminal, closeOnDealloc: false)
    try process.run()
    close(terminal)
    var buffer = [UInt8](repeating: 0, count: 256)
    while true {
      let count = read(master, &buffer, buffer.count)
      if count < 0 && errno == EINTR { continue }
      break
    }
    close(master)
    master = -1
    process.waitUntilExit()
    return process.terminationStatus
  }
}

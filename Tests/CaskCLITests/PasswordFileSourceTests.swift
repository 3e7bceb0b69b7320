import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `--password-file` reads what a shell hands it: a pipe on `/dev/stdin`, a `<(...)` process
/// substitution, a FIFO; and a file that cannot be read fails with the system's reason,
/// never with the password.
@Suite("Password files that are not regular files")
struct PasswordFileSourceTests {
  static let password = "pipe-password-7"
  /// In `CASK_PASSWORD` of every run: only the file can supply the right password.
  static let wrongPassword = "not-the-password"

  /// A runner with a store `s` under `password` holding `k` = `v`.
  private static func storeWithKey(_ label: String) throws -> CaskRunner {
    let cask = try CaskRunner(label)
    _ = try cask.createStore("s", password: password)
    let put = try cask.run(["put", "s", "k"], password: password, stdin: Data("v".utf8))
    #expect(put.status == 0, "\(put.err)")
    return cask
  }

  /// Runs `process` with its outputs on pipes, calling `feed` once it has started.
  private static func collect(_ process: Process, feed: () throws -> Void) throws -> CaskResult {
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    try feed()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CaskResult(status: process.terminationStatus, stdout: out, stderr: err)
  }

  @Test("--password-file /dev/stdin reads the password from a pipe")
  func devStdinPipe() throws {
    let cask = try Self.storeWithKey("password-dev-stdin")
    defer { cask.remove() }
    let process = try cask.process(["get", "s", "k", "--password-file", "/dev/stdin"], password: Self.wrongPassword)
    let input = Pipe()
    process.standardInput = input
    let result = try Self.collect(process) {
      input.fileHandleForWriting.write(Data((Self.password + "\n").utf8))
      try input.fileHandleForWriting.close()
    }
    #expect(result.status == 0, "\(result.err)")
    #expect(result.out == "v")
  }

  @Test("--password-file <(...) reads the password from bash's process substitution")
  func processSubstitution() throws {
    let cask = try Self.storeWithKey("password-substitution")
    defer { cask.remove() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = [
      "-c", #""$0" get s k --password-file <(printf '%s\n' "$1")"#, try CaskRunner.binary(), Self.password,
    ]
    process.currentDirectoryURL = URL(fileURLWithPath: cask.directory.path)
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CASK_") }
    environment["CASK_PASSWORD"] = Self.wrongPassword
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    let result = try Self.collect(process) {}
    #expect(result.status == 0, "\(result.err)")
    #expect(result.out == "v")
  }

  @Test("--password-file reads a FIFO written after cask opened it, without a line ending")
  func fifo() throws {
    let cask = try Self.storeWithKey("password-fifo")
    defer { cask.remove() }
    let fifo = cask.path("pw.fifo")
    #expect(mkfifo(fifo, 0o600) == 0)
    let process = try cask.process(["get", "s", "k", "--password-file", "pw.fifo"], password: Self.wrongPassword)
    process.standardInput = FileHandle.nullDevice
    let result = try Self.collect(process) {
      // Non-blocking, so that a cask that never opens the FIFO fails the test instead of
      // hanging it: ENXIO until a reader has it open.
      var descriptor: Int32 = -1
      for _ in 0..<3_000 where descriptor < 0 {
        descriptor = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0 { usleep(10_000) }
      }
      #expect(descriptor >= 0, "cask never opened the FIFO")
      guard descriptor >= 0 else { return }
      let bytes = Array(Self.password.utf8)
      #expect(write(descriptor, bytes, bytes.count) == bytes.count)
      close(descriptor)
    }
    #expect(result.status == 0, "\(result.err)")
    #expect(result.out == "v")
  }

  @Test("a password file that cannot be read fails with the system's reason and no password")
  func unreadableFilesSayWhy() throws {
    let cask = try Self.storeWithKey("password-file-reasons")
    defer { cask.remove() }
    try FileManager.default.createDirectory(atPath: cask.path("folder"), withIntermediateDirectories: false)
    let cases = [
      ("absent", "Error: cannot read the password file 'absent': No such file or directory\n"),
      ("folder", "Error: cannot read the password file 'folder': Is a directory\n"),
      ("/dev/zero", "Error: the password file '/dev/zero' is longer than 1 MiB\n"),
    ]
    for (file, message) in cases {
      let result = try cask.run(["get", "s", "k", "--password-file", file], password: Self.password)
      #expect(result.status == 1, "\(file)")
      #expect(result.err == message)
      #expect(!result.err.contains(Self.password) && result.stdout.isEmpty)
    }
  }
}

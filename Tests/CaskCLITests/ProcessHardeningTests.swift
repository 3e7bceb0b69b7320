import CaskTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What `cask` does to itself before it reads a secret: no core dumps (and no same-user
/// debugger or `/proc/PID/mem`), the secret variables wiped from where `/proc/PID/environ`
/// shows them, and a warning for a password file that others may read. Observed from outside,
/// on a `cask` process held waiting for its password on standard input.
@Suite("cask process hardening: core dumps, environment, password files")
struct ProcessHardeningTests {
  /// A `cask create s --password-stdin` that waits in `read` on a pipe this test holds open,
  /// run as `nobody` when the tests run as root (so that who owns `/proc/PID` tells).
  final class WaitingCask {
    let process = Process()
    let input = Pipe()
    let errors = Pipe()

    init(_ cask: CaskRunner, environment: [String: String]) throws {
      let binary = try CaskRunner.binary()
      if getuid() == 0 {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
          "--reuid=65534", "--regid=65534", "--clear-groups", binary, "create", "s", "--password-stdin",
        ]
      } else {
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["create", "s", "--password-stdin"]
      }
      var childEnvironment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CASK_") }
      childEnvironment.merge(environment) { $1 }
      process.environment = childEnvironment
      process.currentDirectoryURL = URL(fileURLWithPath: cask.path(""))
      process.standardInput = input
      process.standardOutput = FileHandle.nullDevice
      process.standardError = errors
      try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Whether the process is `cask` itself (past `setpriv`) and blocked reading descriptor 0.
    var isWaitingOnStandardInput: Bool {
      guard let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
        exe.hasSuffix("/cask"),
        let call = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8)
      else { return false }
      return call.hasPrefix("0 0x0 ")  // read(0, ...)
    }

    /// Ends the wait (standard input reaches its end) and returns the exit status and stderr.
    func finish() throws -> (Int32, String) {
      try input.fileHandleForWriting.close()
      let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      return (process.terminationStatus, text)
    }
  }

  @Test("cask is not dumpable and has a core size limit of 0 while it waits for a password")
  func coreDumpsAreOff() throws {
    let cask = try CaskRunner("no-core-dumps")
    defer { cask.remove() }
    let waiting = try WaitingCask(cask, environment: [:])
    #expect(waitUntil { waiting.isWaitingOnStandardInput }, "cask never came to read its password")
    // A process that is not dumpable has its /proc/PID files owned by root, not by its user.
    var info = stat()
    #expect(stat("/proc/\(waiting.pid)/status", &info) == 0)
    #expect(info.st_uid == 0, "owned by \(info.st_uid): cask is dumpable")
    let limits = try String(contentsOfFile: "/proc/\(waiting.pid)/limits", encoding: .utf8)
    let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
    #expect(
      core?.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"], "\(core ?? "")"
    )
    let (status, _) = try waiting.finish()
    #expect(status == 1)
  }

  /// The kernel shows the memory the environment arrived in for as long as the process runs;
  /// `unsetenv` alone leaves it there. A command that does not use a variable wipes it too.
  @Test("CASK_PASSWORD, CASK_NEW_PASSWORD and CASK_PULL_HEADERS are wiped at start, used or not")
  func secretVariablesAreWiped() throws {
    let cask = try CaskRunner("environment-wipe")
    defer { cask.remove() }
    let secrets = [
      "CASK_PASSWORD": "env-secret-one-7f3a", "CASK_NEW_PASSWORD": "env-secret-two-9c1b",
      "CASK_PULL_HEADERS": "Authorization: Bearer env-secret-three-4d2e", "CASK_EXPORT_PASSWORD": "env-secret-four-1a",
    ]
    let waiting = try WaitingCask(cask, environment: secrets.merging(["CASK_UNRELATED": "kept-value"]) { $1 })
    #expect(waitUntil { waiting.isWaitingOnStandardInput }, "cask never came to read its password")
    let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(waiting.pid)/environ"))
    let text = String(decoding: environ, as: UTF8.self)
    #expect(text.contains("CASK_UNRELATED=kept-value"), "the test does not see the environment")
    for (name, value) in secrets {
      #expect(!text.contains(value), "\(name) is still in /proc/PID/environ")
    }
    let (status, errors) = try waiting.finish()
    #expect(status == 1)
    #expect(errors == "Error: --password-stdin was given but standard input is empty\n")
    for value in secrets.values { #expect(!errors.contains(value)) }
  }

  @Test("a password file its group or others can read gets a warning; one of mode 0600 none")
  func sharedPasswordFileWarns() throws {
    let cask = try CaskRunner("password-file-mode")
    defer { cask.remove() }
    try Data("a long enough store password\n".utf8).write(to: URL(fileURLWithPath: cask.path("pw")))
    chmod(cask.path("pw"), 0o640)
    let shared = try cask.run(["create", "s", "--password-file", "pw"])
    #expect(shared.status == 0, "\(shared.err)")
    #expect(
      shared.err
        == "warning: the password file 'pw' can be read by its group (mode 0640): chmod 600 it\nCreated store 's'.\n")
    chmod(cask.path("pw"), 0o600)
    let own = try cask.run(["keys", "s", "--password-file", "pw"])
    #expect(own.status == 0 && own.stderr.isEmpty, "\(own.err)")
  }
}

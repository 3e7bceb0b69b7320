import CaskTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `CASK_PASSWORD` stayed in the process's environment after it was read: readable in
/// `/proc/PID/environ` by the same user (and root) for as long as a long `cask` command ran
/// (prevented here: it is wiped once read). The child is an `encrypt` that waits on a FIFO
/// for its input, so it has read the password and is still running when the test looks.
@Suite("the password in the environment is wiped once read")
struct PasswordEnvironmentTests {
  @Test("CASK_PASSWORD is not in /proc/PID/environ of a running cask after it read the password")
  func environmentIsWiped() throws {
    let cask = try CaskRunner("environ")
    defer { cask.remove() }
    let password = "environ-secret-\(UInt32.random(in: 0...UInt32.max))"
    let fifo = cask.path("in.fifo")
    try #require(mkfifo(fifo, 0o600) == 0)
    let pid = try cask.spawnFromShell(
      "exec \"$0\" encrypt \"$1\" \"$2\"", arguments: [fifo, cask.path("out")], password: password)
    // O_RDWR: does not wait for the reader.
    let writer = open(fifo, O_RDWR)
    try #require(writer >= 0)
    defer { close(writer) }
    var started = false
    for _ in 0..<60_000 {
      var status: Int32 = 0
      if waitpid(pid, &status, WNOHANG) == pid { break }
      let names = try FileManager.default.contentsOfDirectory(atPath: cask.path(""))
      if names.contains(where: { $0.hasSuffix(".partial") }) {
        started = true
        break
      }
      usleep(1000)
    }
    try #require(started, "encrypt did not start")
    let environment = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
    kill(pid, SIGTERM)
    _ = CaskRunner.wait(pid)
    #expect(environment.range(of: Data(password.utf8)) == nil, "the password is still in the environment")
    #expect(environment.range(of: Data("CASK_PASSWORD=e".utf8)) == nil)
  }
}

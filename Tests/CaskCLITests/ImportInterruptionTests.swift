import CaskTestSupport
import CipherCask
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Ctrl-C during `cask import` on a terminal: the progress line is erased, the command says
/// how many objects it kept and through which line (so the import can be resumed from the
/// next), and then ends by the signal; the store holds exactly what it said.
@Suite("An interrupted import says what it kept")
struct ImportInterruptionTests {
  let password = "import-interrupt-pw"

  @Test("Ctrl-C with standard error on a terminal: the bar is erased, then one line tells what was kept")
  func interruptedOnTerminal() throws {
    let cask = try CaskRunner("import-interrupt")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let fifo = cask.path("input")
    #expect(mkfifo(fifo, 0o600) == 0)
    let (master, terminal) = try CaskRunner.openPseudoTerminal()
    defer { close(master) }
    let terminalPath = String(cString: ttyname(terminal))
    let pid = try cask.spawnFromShell(
      #"CASK_PROGRESS_DELAY=0 exec "$0" import "$1" - --collection c --id-key id --batch-size 100 <"$2" 2>"$3""#,
      arguments: [cask.path("s"), fifo, terminalPath], password: password)
    close(terminal)
    let writer = open(fifo, O_WRONLY)
    #expect(writer >= 0)
    let lines = (1...250).map { #"{"id": \#($0)}"# }.joined(separator: "\n") + "\n"
    _ = lines.withCString { write(writer, $0, strlen($0)) }

    // The first frame of the bar shows the signals are taken; then Ctrl-C, then more lines
    // so that a reader waiting for input wakes up and sees the stop.
    var transcript = Data()
    func drain() {
      var buffer = [UInt8](repeating: 0, count: 4096)
      var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
      while poll(&poller, 1, 0) > 0 {
        let count = read(master, &buffer, buffer.count)
        guard count > 0 else { return }
        transcript.append(contentsOf: buffer[0..<count])
      }
    }
    for _ in 0..<20_000 where !String(decoding: transcript, as: UTF8.self).contains("Importing") {
      drain()
      usleep(1000)
    }
    #expect(String(decoding: transcript, as: UTF8.self).contains("Importing"), "no progress bar was drawn")
    kill(pid, SIGINT)
    // More objects, one at a time, until the command stops: it must stop at one of them
    // (the signal is taken on another thread, at a moment the test cannot see).
    let previous = signal(SIGPIPE, SIG_IGN)
    defer { signal(SIGPIPE, previous) }
    var status: Int32 = 0
    var next = 251
    while waitpid(pid, &status, WNOHANG) == 0 {
      if next <= 100_000 {
        _ = "{\"id\": \(next)}\n".withCString { write(writer, $0, strlen($0)) }
        next += 1
      }
      drain()
      usleep(500)
    }
    close(writer)
    drain()
    #expect(next <= 100_000, "the import did not stop")
    #expect(status & 0x7f == SIGINT, "status \(status)")

    let text = String(decoding: transcript, as: UTF8.self)
    let store = try CaskStore(path: cask.path("s"), password: password, options: .init(readOnly: true))
    defer { try? store.close() }
    let kept = try store.keys().count
    #expect(kept % 100 == 0 && kept < next, "\(kept) objects")
    let expected =
      kept == 0
      ? "Interrupted: nothing was written.\r\n"
      : "Interrupted: \(kept) objects were imported, through line \(kept) of standard input; "
        + "nothing after that line was written.\r\n"
    #expect(text.contains("\r\u{1B}[K" + expected), "\(text.debugDescription)")
  }
}

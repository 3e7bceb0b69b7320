import CaskTestSupport
import Foundation
import Testing

/// The progress bar: drawn on standard error when it is a terminal, erased at the end, and
/// absent when it is not (the other suites check that stderr stays empty then).
@Suite("cask progress")
struct ProgressTests {
  let password = "progress-pw"

  @Test("on a terminal, encrypt and import draw a bar with rate and ETA and erase it; stdout stays clean")
  func barOnTerminal() throws {
    let cask = try CaskRunner("progress")
    defer { cask.remove() }
    var random = SeededRandom.make(test: "cli progress")
    try random.bytes(4 << 20).write(to: URL(fileURLWithPath: cask.path("plain")))
    // CASK_PROGRESS_DELAY=0 draws the first frame at once, so the test does not depend on speed.
    let immediately = ["CASK_PROGRESS_DELAY": "0"]

    let encrypted = try cask.runWithTerminalStderr(
      ["encrypt", "plain", "sealed"], password: password, environment: immediately)
    #expect(encrypted.status == 0, "\(encrypted.err)")
    #expect(encrypted.stdout.isEmpty)
    #expect(encrypted.err.hasPrefix("\rEncrypting ["))
    #expect(encrypted.err.contains("/s  ETA "))
    #expect(encrypted.err.hasSuffix("\r\u{1B}[K"), "the bar is not erased")

    _ = try cask.createStore("s", password: password)
    let lines = (1...500).map { "{\"id\": \($0)}\n" }.joined()
    try Data(lines.utf8).write(to: URL(fileURLWithPath: cask.path("objects.jsonl")))
    let imported = try cask.runWithTerminalStderr(
      ["import", "s", "objects.jsonl", "--collection", "c", "--id-key", "id"], password: password,
      environment: immediately)
    #expect(imported.status == 0, "\(imported.err)")
    #expect(imported.err.hasPrefix("\rImporting ["))
    #expect(imported.err.hasSuffix("\r\u{1B}[K"))
    #expect(imported.out.hasSuffix(": 500 inserted, 0 replaced.\n"))

    // The same commands with stderr a file: no trace of a bar.
    let quiet = try cask.run(["decrypt", "sealed", "opened"], password: password, environment: immediately)
    #expect(quiet.status == 0 && quiet.stderr.isEmpty)
  }
}

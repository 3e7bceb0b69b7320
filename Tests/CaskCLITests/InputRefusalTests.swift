import CaskTestSupport
import Foundation
import Testing

/// Input that used to be taken in a form other than the one given (a password repaired to
/// U+FFFD, an id rounded through `Double`), or that crashed the tool, or that was ignored.
@Suite("cask refuses input it cannot take as given")
struct InputRefusalTests {
  let password = "refusal-pw"

  /// `/bin/sh -c` that sets `variable` to `value` (printf's escapes, e.g. `\377`) and runs the command.
  private func withVariable(_ variable: String, _ value: String) -> [String] {
    ["/bin/sh", "-c", "\(variable)=\"$(printf '\(value)')\" exec \"$@\"", "sh"]
  }

  @Test("a CASK_PASSWORD that is not UTF-8 is refused, as from a password file, and no store is made")
  func passwordVariableNotUTF8() throws {
    let cask = try CaskRunner("env-utf8")
    defer { cask.remove() }
    let created = try cask.run(["create", "s"], prefix: withVariable("CASK_PASSWORD", "pw\\377"))
    #expect(created.status == 1)
    #expect(created.err == "Error: the password from CASK_PASSWORD is not valid UTF-8\n")
    #expect(!FileManager.default.fileExists(atPath: cask.path("s")))
  }

  @Test("a CASK_NEW_PASSWORD that is not UTF-8 is refused and the password stays")
  func newPasswordVariableNotUTF8() throws {
    let cask = try CaskRunner("env-new-utf8")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let changed = try cask.run(
      ["passwd", "s"], password: password, prefix: withVariable("CASK_NEW_PASSWORD", "new\\376"))
    #expect(changed.status == 1)
    #expect(changed.err == "Error: the password from CASK_NEW_PASSWORD is not valid UTF-8\n")
    #expect(try cask.run(["keys", "s"], password: password).status == 0)
  }

  @Test("CASK_PROGRESS_DELAY of inf, nan or 1e16 does not crash a command with a bar")
  func progressDelayOutOfRange() throws {
    let cask = try CaskRunner("delay-range")
    defer { cask.remove() }
    try Data(repeating: 1, count: 4096).write(to: URL(fileURLWithPath: cask.path("plain")))
    for (index, delay) in ["inf", "nan", "1e16", "-inf"].enumerated() {
      let result = try cask.runWithTerminalStderr(
        ["encrypt", "plain", "sealed\(index)"], password: password, environment: ["CASK_PROGRESS_DELAY": delay])
      #expect(result.status == 0, "CASK_PROGRESS_DELAY=\(delay): \(result.err)")
    }
  }

  @Test("numeric ids beyond 64 bits keep their exact decimal, not a rounded Double that merges two objects")
  func hugeNumericIDsKeptExactly() throws {
    let cask = try CaskRunner("huge-ids")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let lines = [
      "18446744073709551616", "18446744073709551617", "-9223372036854775809", "-9223372036854775808",
      "18446744073709551615", "1e20", "1.5E+2", "-0", "4.5",
    ].map { "{\"id\": \($0)}\n" }.joined()
    try Data(lines.utf8).write(to: URL(fileURLWithPath: cask.path("objects.jsonl")))
    let imported = try cask.run(
      ["import", "s", "objects.jsonl", "--collection", "c", "--id-key", "id"], password: password)
    #expect(imported.status == 0, "\(imported.err)")
    #expect(imported.out.hasSuffix(": 9 inserted, 0 replaced.\n"), "\(imported.out)")
    let listed = try cask.run(["keys", "s", "--collection", "c"], password: password)
    let ids = [
      "-9223372036854775808", "-9223372036854775809", "0", "100000000000000000000", "150", "18446744073709551615",
      "18446744073709551616", "18446744073709551617", "4.5",
    ]
    #expect(listed.out == ids.map { $0 + "\n" }.joined())
  }

  @Test("seeded: an integer id written in any JSON spelling (a fraction of zeros, an exponent) is its decimal")
  func integerIDsInEverySpelling() throws {
    var random = SeededRandom.make(test: "import integer id spellings")
    let cask = try CaskRunner("id-spellings")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    var expected = Set<String>()
    var lines = ""
    for _ in 0..<testIterations(200) {
      // The integer: up to 40 digits, no leading zero; then its sign.
      let length = Int(random.next() % 40) + 1
      var digits = (0..<length).map { _ in String(random.next() % 10) }.joined()
      while digits.count > 1 && digits.hasPrefix("0") { digits.removeFirst() }
      let negative = digits != "0" && random.next() % 2 == 0
      guard expected.insert((negative ? "-" : "") + digits).inserted else { continue }
      // A spelling of it: the point moved left by `shift` places and an exponent of `shift`
      // (plus trailing zeros that the exponent takes back), a fraction of zeros, or as it is.
      let spelling: String
      switch random.next() % 3 {
      case 0 where digits != "0":  // "00.00e-1" would not be JSON
        let zeros = Int(random.next() % 4)
        let padded = digits + String(repeating: "0", count: zeros)
        let shift = Int(random.next() % UInt64(padded.count))
        let point = padded.index(padded.endIndex, offsetBy: -shift)
        let mantissa = shift == 0 ? padded : padded[..<point] + "." + padded[point...]
        let exponent = shift - zeros
        spelling =
          mantissa + (random.next() % 2 == 0 ? "e" : "E") + (exponent >= 0 && random.next() % 2 == 0 ? "+" : "")
          + String(exponent)
      case 1:
        spelling = digits + "." + String(repeating: "0", count: Int(random.next() % 5) + 1)
      default:
        spelling = digits
      }
      lines += "{\"id\": \(negative ? "-" : "")\(spelling)}\n"
    }
    try Data(lines.utf8).write(to: URL(fileURLWithPath: cask.path("objects.jsonl")))
    let imported = try cask.run(
      ["import", "s", "objects.jsonl", "--collection", "c", "--id-key", "id"], password: password)
    #expect(imported.status == 0, "\(imported.err)")
    let listed = try cask.run(["keys", "s", "--collection", "c"], password: password)
    #expect(Set(listed.out.split(separator: "\n").map(String.init)) == expected)
  }

  @Test("a fractional id that a Double cannot hold exactly is refused, naming its line; nothing is written")
  func inexactFractionalIDRefused() throws {
    let cask = try CaskRunner("inexact-id")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    // 0.10000000000000001 prints as the Double 0.1: it would replace the object whose id is 0.1.
    try Data("{\"id\": 0.1}\n{\"id\": 0.10000000000000001}\n".utf8).write(
      to: URL(fileURLWithPath: cask.path("objects.jsonl")))
    let imported = try cask.run(
      ["import", "s", "objects.jsonl", "--collection", "c", "--id-key", "id"], password: password)
    #expect(imported.status == 1)
    #expect(
      imported.err
        == "Error: invalid import at line 2 of 'objects.jsonl': the value of 'id' is a number that has no exact id "
        + "(write the id as a string); nothing was written\n")
    #expect(try cask.run(["keys", "s", "--collection", "c"], password: password).out.isEmpty)
  }

  @Test("pull refuses --next-key with --page-parameter as a usage error, before any request")
  func nextKeyWithPageParameter() throws {
    let cask = try CaskRunner("pull-next-page")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let pulled = try cask.run(
      [
        "pull", "s", "http://127.0.0.1:9/items", "--collection", "c", "--id-key", "id", "--page-parameter", "page",
        "--next-key", "more",
      ], password: password)
    #expect(pulled.status == 64)
    #expect(pulled.err.hasPrefix("Error: --next-key cannot be used with --page-parameter"), "\(pulled.err)")
  }
}

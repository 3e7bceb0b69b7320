import CaskTestSupport
import Foundation
import Testing

/// Usage errors that help: a mistyped subcommand or option gets the name that was probably
/// meant (exit 64), `cask help help` works, a negative number is called not positive, and a
/// missing `--file` is named, with its reason, before any password is asked for.
@Suite("Usage errors suggest and check before asking")
struct UsageSuggestionTests {
  @Test(
    "a mistyped name gets a suggestion, exit 64",
    arguments: [
      (["improt", "s"], "Error: Unknown subcommand 'improt' (did you mean 'import'?)"),
      (["verfy", "s"], "Error: Unknown subcommand 'verfy' (did you mean 'verify'?)"),
      (["--verison"], "Error: Unknown option '--verison' (did you mean '--version'?)"),
      (["keys", "s", "--prefx", "a"], "Error: Unknown option '--prefx' (did you mean '--prefix'?)"),
      (["zzzzzz"], "Error: Unknown subcommand 'zzzzzz'\n"),
    ])
  func suggestion(words: [String], expected: String) throws {
    let cask = try CaskRunner("suggest")
    defer { cask.remove() }
    let result = try cask.run(words)
    #expect(result.status == 64)
    #expect(result.err.hasPrefix(expected), "\(result.err)")
  }

  @Test("cask help help prints the help of help")
  func helpOfHelp() throws {
    let cask = try CaskRunner("help-help")
    defer { cask.remove() }
    let result = try cask.run(["help", "help"])
    #expect(result.status == 0, "\(result.err)")
    #expect(result.out.hasPrefix("OVERVIEW: Show the help of cask, or of one subcommand.\n"))
    #expect(result.out.contains("USAGE: cask help [<subcommand>]"))
  }

  @Test("--batch-size -1 is called not positive, not a missing value")
  func negativeBatchSize() throws {
    let cask = try CaskRunner("negative")
    defer { cask.remove() }
    let result = try cask.run(["import", "s", "f", "--collection", "c", "--id-key", "id", "--batch-size", "-1"])
    #expect(result.status == 64)
    #expect(
      result.err.hasPrefix("Error: The value '-1' is invalid for '--batch-size': expected a positive integer\n"),
      "\(result.err)")
  }

  @Test("put --file MISSING names the file and the reason before any password is asked for")
  func missingFileBeforePassword() throws {
    let cask = try CaskRunner("missing-file")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: "pw")
    // No password source and no terminal: asking for one would fail with "no password".
    let result = try cask.run(["put", "s", "k", "--file", "missing"])
    #expect(result.status == 1)
    #expect(result.err == "Error: cannot read 'missing': No such file or directory\n")
  }

  @Test("put --file - stores standard input byte for byte")
  func putFileDash() throws {
    let cask = try CaskRunner("put-dash")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: "pw")
    let value = StandardStreamDashTests.binary("put dash")
    #expect(try cask.run(["put", "s", "k", "--file", "-"], password: "pw", stdin: value).status == 0)
    #expect(try cask.run(["get", "s", "k"], password: "pw").stdout == value)
  }
}

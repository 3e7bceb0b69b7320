import Foundation
import Testing

/// The command line itself: help, version, usage errors and their exit status 64.
@Suite("cask command line")
struct CommandLineTests {
  @Test("--version prints the newest version of CHANGELOG.md, the one README.md names, and exits 0")
  func version() throws {
    let cask = try CaskRunner("version")
    defer { cask.remove() }
    let result = try cask.run(["--version"])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let changelog = try String(contentsOf: root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
    // The first heading with a number: "## [0.9.0] - date" (the one before it is [Unreleased]).
    let released = changelog.split(separator: "\n").first {
      $0.hasPrefix("## [") && $0.dropFirst(4).first?.isNumber == true
    }
    let newest = released.map { String($0.dropFirst(4).prefix { $0 != "]" }) }
    #expect(newest != nil, "CHANGELOG.md names no released version")
    #expect(result.out == (newest ?? "?") + "\n")
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    #expect(readme.contains("Status: pre-release, version \(newest ?? "?") plus"), "README.md names another version")
  }

  @Test("-h, --help and 'help <sub>' print the same sections for every subcommand")
  func helpIsTheSameThreeWays() throws {
    let cask = try CaskRunner("help")
    defer { cask.remove() }
    let root = try cask.run(["--help"])
    #expect(root.status == 0)
    for section in ["OVERVIEW:", "USAGE: cask <subcommand>", "OPTIONS:", "SUBCOMMANDS:", "--version"] {
      #expect(root.out.contains(section))
    }
    let names = [
      "demo", "create", "put", "get", "delete", "keys", "import", "pull", "export", "encrypt", "decrypt", "compact",
      "backup", "verify", "stats", "passwd", "rekey",
    ]
    for name in names {
      #expect(root.out.contains("\n  \(name) "), "root help lists \(name)")
      let long = try cask.run([name, "--help"])
      let short = try cask.run([name, "-h"])
      let viaHelp = try cask.run(["help", name])
      #expect(long.status == 0 && short.status == 0 && viaHelp.status == 0)
      #expect(long.out == short.out && long.out == viaHelp.out, "help of \(name) differs")
      #expect(long.out.hasPrefix("OVERVIEW: "))
      #expect(long.out.contains("\nUSAGE: cask \(name)"))
      #expect(long.out.contains("\nOPTIONS:\n"))
      #expect(long.out.contains("-h, --help"))
      #expect(long.stderr.isEmpty)
    }
    #expect(try cask.run(["help", "get"]).out.contains("\nARGUMENTS:\n  <store>"))
    // With no subcommand, or 'help' alone, the root help, as swift-argument-parser does.
    #expect(try cask.run([]).out == root.out)
    #expect(try cask.run(["help"]).out == root.out)
  }

  @Test("usage errors exit 64 with 'Error:' and a usage hint on stderr, nothing on stdout")
  func usageErrors() throws {
    let cask = try CaskRunner("usage")
    defer { cask.remove() }
    let cases: [([String], String)] = [
      (["frobnicate"], "Unknown subcommand 'frobnicate'"),
      (["--frob"], "Unknown option '--frob'"),
      (["get"], "Missing expected argument '<store>'"),
      (["get", "store"], "Missing expected argument '<key>'"),
      (["get", "store", "key", "extra"], "1 unexpected argument"),
      (["keys", "store", "--bogus"], "Unknown option '--bogus'"),
      (["put", "store", "key", "--file"], "Missing value for '--file <file>'"),
      (["keys", "store", "--json=yes"], "The flag '--json' does not take a value"),
      (["import", "store", "file.json", "--id-key", "id"], "Missing expected argument '--collection <name>'"),
      (["export", "store", "dir", "--format", "xml"], "The value 'xml' is invalid for '--format <format>'"),
      (["import", "store", "f", "--collection", "c", "--id-key", "id", "--batch-size", "0"], "expected a positive"),
      (["help", "nothing"], "Unknown subcommand 'nothing'"),
      (["put", "store", "key", "--password-stdin"], "--password-stdin needs --file"),
    ]
    for (arguments, message) in cases {
      let result = try cask.run(arguments, password: "pw")
      #expect(result.status == 64, "\(arguments) exited \(result.status)")
      #expect(result.err.hasPrefix("Error: "), "\(arguments): \(result.err)")
      #expect(result.err.contains(message), "\(arguments): \(result.err)")
      #expect(result.err.contains("\nUsage: cask"), "\(arguments) has no usage hint")
      #expect(result.stdout.isEmpty)
    }
  }

  @Test("a password given as an option is refused without echoing it")
  func passwordArgumentIsRefused() throws {
    let cask = try CaskRunner("pwarg")
    defer { cask.remove() }
    for arguments in [
      ["get", "store", "key", "--password", "hunter2"], ["get", "store", "key", "--password=hunter2"],
    ] {
      let result = try cask.run(arguments)
      #expect(result.status == 64)
      #expect(result.err.contains("never taken as command-line arguments"))
      #expect(!result.err.contains("hunter2"))
    }
  }

  @Test("a password before the subcommand or after 'help' is not echoed in 'Unknown option' (found by fuzz-cli-args)")
  func passwordBeforeTheSubcommand() throws {
    let cask = try CaskRunner("pwroot")
    defer { cask.remove() }
    let result = try cask.run(["--password=hunter2", "get", "s", "k"])
    #expect(result.status == 64)
    #expect(result.err.hasPrefix("Error: Unknown option '--password'\n"), "\(result.err)")
    #expect(!result.err.contains("hunter2"))
    // A combining mark after '=' is one Character with it; the parser splits on scalars.
    let combining = try cask.run(["get", "s", "k", "--password=\u{301}hunter2"])
    #expect(combining.status == 64 && combining.err.contains("never taken as command-line arguments"))
    #expect(!combining.err.contains("hunter2"))
    let afterHelp = try cask.run(["help", "--password=hunter2"])
    #expect(afterHelp.status == 64 && afterHelp.err.hasPrefix("Error: Unknown option '--password'\n"))
  }

  @Test("control characters in a quoted word are escaped, so an error stays one line (found by fuzz-cli-args)")
  func controlCharactersAreEscaped() throws {
    let cask = try CaskRunner("control")
    defer { cask.remove() }
    let cases: [([String], String)] = [
      (["not\u{5}s"], "Error: Unknown subcommand 'not\\u{5}s'\n"),
      (["keys", "s", "--bo\ngus"], "Error: Unknown option '--bo\\ngus'\n"),
      (
        ["export", "s", "d", "--format", "x\u{1b}[2J"],
        "Error: The value 'x\\u{1b}[2J' is invalid for '--format <format>'"
      ),
      (["help", "a\rb"], "Error: Unknown subcommand 'a\\rb'\n"),
    ]
    for (arguments, expected) in cases {
      let result = try cask.run(arguments)
      #expect(result.status == 64)
      #expect(result.err.hasPrefix(expected), "\(arguments): \(result.err.debugDescription)")
      #expect(result.err.split(separator: "\n").count == 3, "\(arguments): \(result.err.debugDescription)")
    }
  }

  @Test("every subcommand the parser knows runs its own implementation")
  func everySubcommandIsImplemented() throws {
    let cask = try CaskRunner("implemented")
    defer { cask.remove() }
    try Data().write(to: URL(fileURLWithPath: cask.path("file")))
    // Each command line parses, reaches its command, and fails there (exit 1) on its path;
    // `demo` runs in DemoTests.
    let lines: [[String]] = [
      ["create", "file"], ["put", "missing", "k", "--file", "file"], ["get", "missing", "k"],
      ["delete", "missing", "k"], ["keys", "missing"],
      ["import", "missing", "file", "--collection", "c", "--id-key", "id"],
      ["pull", "missing", "http://127.0.0.1:1/", "--collection", "c", "--id-key", "id"],
      ["export", "missing", "out"], ["encrypt", "missing", "out"], ["decrypt", "missing", "out"],
      ["compact", "missing"], ["backup", "missing", "out"],
      ["verify", "missing"], ["stats", "missing"], ["passwd", "missing"], ["rekey", "missing", "out"],
    ]
    let help = try cask.run(["--help"]).out
    for arguments in lines {
      #expect(help.contains("\n  \(arguments[0]) "))
      let result = try cask.run(arguments, password: "pw")
      #expect(result.status == 1, "\(arguments) exited \(result.status): \(result.err)")
      #expect(
        result.err.hasPrefix("Error: ") && result.err.contains("'\(arguments[1])'"), "\(arguments): \(result.err)")
    }
  }
}

import Foundation
import PeerKit

/// A `cask-bench` subcommand: a type in its own file, listed in `subcommands` (main.swift); the
/// dispatcher handles `--help`, `help <name>` and the exit codes.
protocol BenchCommand {
  /// The word after `cask-bench`, and one line for the root help.
  static var name: String { get }
  static var abstract: String { get }
  /// The usage line; by default every option in brackets, in the order `options` lists them.
  static var usage: String { get }
  /// The help's OPTIONS, one a line (`-h, --help` is added after them).
  static var options: [(flag: String, help: String)] { get }

  /// Runs with the arguments after the name; throws `UsageError` (exit 64) or a failure (exit 1).
  static func run(arguments: [String]) throws
}

extension BenchCommand {
  static var usage: String {
    (["cask-bench", name] + options.map { "[\($0.flag)]" }).joined(separator: " ")
  }

  /// The text `cask-bench <name> --help` and `cask-bench help <name>` print.
  static var help: String {
    let all = options + [("-h, --help", "Show help information.")]
    let width = (all.map { $0.flag.count }.max() ?? 0) + 2
    let lines = all.map { "  " + $0.flag.padding(toLength: width, withPad: " ", startingAt: 0) + $0.help }
    return """
      OVERVIEW: \(abstract)

      USAGE: \(usage)

      OPTIONS:
      \(lines.joined(separator: "\n"))
      """
  }
}

/// A command line that cannot be understood (exit 64), and a benchmark that cannot run.
typealias UsageError = PeerUsageError
typealias BenchError = PeerError

/// The options after a subcommand's name, consumed one by one; whatever is left over is an
/// error, so a misspelt flag never passes silently.
struct Options {
  private var remaining: [String]
  private let arguments: [String]
  private let subcommand: String
  /// The first word of each option the subcommand lists (`--dir`, `--quick`).
  private let listed: Set<String>
  private var quick = false

  init<Command: BenchCommand>(_ arguments: [String], of command: Command.Type) {
    remaining = arguments
    self.arguments = arguments
    subcommand = command.name
    listed = Set(command.options.compactMap { $0.flag.split(separator: " ").first.map(String.init) })
  }

  /// Whether the flag `name` (for example `--quick`) was given; consumes it.
  mutating func flag(_ name: String) -> Bool {
    let count = remaining.count
    remaining.removeAll { $0 == name }
    if name == "--quick" && remaining.count != count { quick = true }
    return remaining.count != count
  }

  /// The end of a measuring subcommand's command line: reads `--dir DIR` (where listed; default
  /// /tmp) and `--results DIR`, fails on an argument nobody consumed, runs `body` with where the
  /// results go and a fresh folder under `--dir` (removed after), then prints what it wrote.
  mutating func measure(_ body: (ResultsDestination, String) throws -> Void) throws {
    let base = listed.contains("--dir") ? try value("--dir") ?? "/tmp" : "/tmp"
    let results = try ResultsDestination(
      subcommand, arguments: arguments, folder: try value("--results"), quick: quick)
    try finish()
    let scratch = try ScratchDirectory(in: base)
    defer { scratch.remove() }
    try body(results, scratch.path)
    results.printTables()
  }

  /// The value of `name FILE` or `name=FILE`; consumes both. The last one given wins.
  mutating func value(_ name: String) throws -> String? {
    var found: String?
    var index = 0
    while index < remaining.count {
      let argument = remaining[index]
      if argument.hasPrefix(name + "=") {
        found = String(argument.dropFirst(name.count + 1))
        remaining.remove(at: index)
      } else if argument == name {
        guard index + 1 < remaining.count, !remaining[index + 1].hasPrefix("-") else {
          throw UsageError("missing value for '\(name)'")
        }
        found = remaining[index + 1]
        remaining.removeSubrange(index...index + 1)
      } else {
        index += 1
      }
    }
    if found?.isEmpty == true { throw UsageError("missing value for '\(name)'") }
    return found
  }

  /// The whole number given as `name N`, at least `minimum` (`100,000` reads as `100000`).
  mutating func number(_ name: String, atLeast minimum: Int) throws -> Int? {
    guard let text = try value(name) else { return nil }
    guard let number = Int(text.replacingOccurrences(of: ",", with: "")), number >= minimum else {
      throw UsageError("'\(name)' takes a whole number of at least \(minimum), not '\(text)'")
    }
    return number
  }

  mutating func positive(_ name: String) throws -> Int? {
    try number(name, atLeast: 1)
  }

  /// The whole number given as `name N`, which must lie in `range`.
  mutating func number(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
    guard let text = try value(name) else { return nil }
    guard let number = Int(text), range.contains(number) else {
      throw UsageError("'\(name)' takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
    }
    return number
  }

  /// The comma-separated whole numbers given as `name N,N...`, each at least `minimum`.
  mutating func numbers(_ name: String, atLeast minimum: Int) throws -> [Int]? {
    try list(name) { part in
      guard let number = Int(part), number >= minimum else {
        throw UsageError("'\(name)' takes whole numbers of at least \(minimum), not '\(part)'")
      }
      return number
    }
  }

  /// The comma-separated names given as `name A,B...`, each one of `allowed`.
  mutating func names(_ name: String, from allowed: [String]) throws -> [String]? {
    try list(name) { part in
      guard allowed.contains(part) else {
        throw UsageError("'\(name)' takes \(allowed.joined(separator: ", ")), not '\(part)'")
      }
      return part
    }
  }

  private mutating func list<Item>(_ name: String, _ item: (String) throws -> Item) throws -> [Item]? {
    try value(name).map { try $0.split(separator: ",", omittingEmptySubsequences: false).map { try item(String($0)) } }
  }

  /// Call after consuming every known option; throws naming the first argument left over.
  func finish() throws {
    guard let first = remaining.first else { return }
    throw UsageError(first.hasPrefix("-") ? "unknown option '\(first)'" : "unexpected argument '\(first)'")
  }
}

/// Writes a line to standard error: progress and diagnostics, never data.
func printToStandardError(_ line: String) {
  FileHandle.standardError.write(Data((line + "\n").utf8))
}

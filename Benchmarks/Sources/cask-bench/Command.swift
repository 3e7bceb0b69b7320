import Foundation

/// A `cask-bench` subcommand. To add one (engine, peers, ...), write a type in its own file that
/// conforms, and list it in `subcommands` in main.swift; the dispatcher handles `--help`,
/// `help <name>` and the exit codes.
protocol BenchCommand {
  /// The word after `cask-bench`, for example `codec`.
  static var name: String { get }
  /// One line for the root help's SUBCOMMANDS list.
  static var abstract: String { get }
  /// The usage line; by default every option in brackets, in the order `options` lists them.
  static var usage: String { get }
  /// The OPTIONS section of the help, one option a line (`-h, --help` is added after them).
  static var options: [(flag: String, help: String)] { get }

  /// Runs the subcommand with the arguments after its name (`--help` is handled before).
  ///
  /// - Throws: `UsageError` for arguments it does not accept (exit 64); any other error is a
  ///   failure of the run (exit 1).
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

/// Thrown when the command line cannot be understood; the dispatcher prints it after `Error: `
/// with a usage hint and exits with 64.
struct UsageError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }
}

/// Thrown when a benchmark cannot run (a sanity check failed, a file cannot be written).
struct BenchError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }
}

/// The options after a subcommand's name, consumed one by one; whatever is left over is an
/// error, so a misspelt flag never passes silently.
struct Options {
  private var remaining: [String]
  private let arguments: [String]
  private let subcommand: String
  /// The first word of each option the subcommand lists (`--dir`, `--quick`).
  private let listed: Set<String>
  /// Whether `--quick` was given.
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

  /// The end of a measuring subcommand's command line and what it does around its work: reads
  /// `--dir DIR` (where it lists it; default /tmp) and `--results DIR`, fails on an argument
  /// nobody consumed, runs `body` with where the results go and a fresh folder under `--dir`
  /// (removed after), then prints the tables of what it wrote.
  ///
  /// - Throws: `UsageError` for an argument left over; what `body` throws.
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
  ///
  /// - Throws: `UsageError` when `name` is last or followed by another option.
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

  /// The whole number given as `name N`, if any, at least `minimum` (`100,000` reads as
  /// `100000`); consumes both.
  ///
  /// - Throws: `UsageError` when the value is missing, not a whole number or below `minimum`.
  mutating func number(_ name: String, atLeast minimum: Int) throws -> Int? {
    guard let text = try value(name) else { return nil }
    guard let number = Int(text.replacingOccurrences(of: ",", with: "")), number >= minimum else {
      throw UsageError("'\(name)' takes a whole number of at least \(minimum), not '\(text)'")
    }
    return number
  }

  /// The positive whole number given as `name N`, if any; consumes both.
  mutating func positive(_ name: String) throws -> Int? {
    try number(name, atLeast: 1)
  }

  /// The whole number given as `name N`, if any, which must lie in `range`; consumes both.
  ///
  /// - Throws: `UsageError` when the value is missing, not a number or outside `range`.
  mutating func number(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
    guard let text = try value(name) else { return nil }
    guard let number = Int(text), range.contains(number) else {
      throw UsageError("'\(name)' takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'")
    }
    return number
  }

  /// The comma-separated whole numbers given as `name N,N...`, if any, each at least `minimum`;
  /// consumes both.
  ///
  /// - Throws: `UsageError` when the value is missing or one of them is not such a number.
  mutating func numbers(_ name: String, atLeast minimum: Int) throws -> [Int]? {
    try value(name).map { text in
      try text.split(separator: ",", omittingEmptySubsequences: false).map { part in
        guard let number = Int(part), number >= minimum else {
          throw UsageError("'\(name)' takes whole numbers of at least \(minimum), not '\(part)'")
        }
        return number
      }
    }
  }

  /// The comma-separated names given as `name A,B...`, if any, each one of `allowed`; consumes
  /// both.
  ///
  /// - Throws: `UsageError` naming the first that is not allowed, and the ones that are.
  mutating func names(_ name: String, from allowed: [String]) throws -> [String]? {
    try value(name).map { text in
      let names = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
      if let unknown = names.first(where: { !allowed.contains($0) }) {
        throw UsageError("'\(name)' takes \(allowed.joined(separator: ", ")), not '\(unknown)'")
      }
      return names
    }
  }

  /// Call after consuming every known option.
  ///
  /// - Throws: `UsageError` naming the first argument nobody consumed.
  func finish() throws {
    guard let first = remaining.first else { return }
    throw UsageError(first.hasPrefix("-") ? "unknown option '\(first)'" : "unexpected argument '\(first)'")
  }
}

/// Writes a line to standard error: progress and diagnostics, never data.
func printToStandardError(_ line: String) {
  FileHandle.standardError.write(Data((line + "\n").utf8))
}

import Foundation
import PeerKit

/// One results file under `Benchmarks/results/`: a subcommand's figures with what a reader needs
/// to trust them (the command, the code measured, the machine and how busy it was). `cask-bench
/// report` draws Docs/BENCHMARKS.md's tables and Docs/charts/ from these files alone.
struct ResultsFile<Figures> {
  /// The subcommand, for example `peers`.
  let subcommand: String
  /// The store size the figures are for (keys, objects, events), or `nil` for one without.
  let size: Int?
  /// The command line, as typed.
  let command: String
  /// The latest released CipherCask version in CHANGELOG.md, `+unreleased` when the changelog
  /// has changes after it.
  let version: String
  /// `git rev-parse HEAD` of the repository measured, `+dirty` when the product's sources
  /// (`Sources/`, `Package.swift`) had uncommitted changes.
  let commit: String
  /// When the run ended, ISO 8601 in UTC.
  let date: String
  let machine: Machine
  /// /proc/loadavg's 1, 5 and 15 minute averages when the run started and when it ended: the
  /// machine is shared, and a loaded run's figures are noisier and slower.
  let loadAtStart: [Double]
  let loadAtEnd: [Double]
  let figures: Figures
}

extension ResultsFile: Encodable where Figures: Encodable {}
extension ResultsFile: Decodable where Figures: Decodable {}

/// Where a run's results go (`--results DIR`), the writing of them, and the tables the run
/// prints: those `cask-bench report` draws from the same files, so a figure reads the same in a
/// terminal and in Docs/BENCHMARKS.md.
final class ResultsDestination {
  let subcommand: String
  /// The folder, or `nil` when this run keeps none (`--quick` without `--results`).
  let folder: String?
  let command: String
  let loadAtStart = LoadAverage.current()
  /// What this run wrote (also when it keeps no files), for `printTables`.
  private(set) var written = ResultsSet(everyKind: true)

  /// Where `subcommand` run with `arguments` writes: `folder` (`--results`), or by default
  /// Benchmarks/results; a `quick` run keeps no results unless told where, so that CI's short,
  /// noisy runs never replace the committed ones.
  init(_ subcommand: String, arguments: [String], folder given: String?, quick: Bool) throws {
    self.subcommand = subcommand
    command = (["cask-bench", subcommand] + arguments).joined(separator: " ")
    folder = given ?? (quick ? nil : Self.defaultFolder)
    guard let folder else { return }
    try explained("cannot create the results folder '\(folder)'") {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    guard FileManager.default.isWritableFile(atPath: folder) else {
      throw BenchError("cannot write results: '\(folder)' is not a writable folder")
    }
  }

  /// The repository this binary was built from: the results folder and the version live there.
  static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  static var defaultFolder: String { repository + "/Benchmarks/results" }

  /// The `--results DIR` option's help line.
  static let option = (
    "--results DIR",
    "Write the results as JSON to DIR (default Benchmarks/results; with --quick, none unless given)."
  )

  /// Writes `figures` as `<subcommand>-<size>.json` (or `<subcommand>.json`, or with `name` in
  /// place of the size) in the folder, replacing the file of the previous run.
  func write<Figures: Encodable>(_ figures: Figures, size: Int? = nil, name: String? = nil) throws {
    let suffix = name ?? size.map(String.init)
    let file = subcommand + (suffix.map { "-" + $0 } ?? "") + ".json"
    let results = ResultsFile(
      subcommand: subcommand, size: size, command: command, version: Self.version(), commit: Self.commit(),
      date: ISO8601DateFormatter().string(from: Date()), machine: Machine.current(), loadAtStart: loadAtStart,
      loadAtEnd: LoadAverage.current(), figures: figures)
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let data = try explained("cannot encode a results file") { try encoder.encode(results) + Data("\n".utf8) }
    try written.add(file, data: data, folder: folder ?? "(not kept)")
    guard let folder else {
      printToStandardError("\(subcommand): \(file) not written (a --quick run keeps results only with --results DIR)")
      return
    }
    try writeAtomically(data, to: folder + "/" + file)
    printToStandardError("\(subcommand): wrote \(folder)/\(file)")
  }

  /// Prints the report's tables for what this run wrote: its subcommand's part of
  /// Docs/BENCHMARKS.md and the targets it measured.
  func printTables() {
    let sections = ReportCommand.sections(written)
    print(sections[subcommand] ?? ReportCommand.noResults)
    if let targets = sections["targets"], targets != ReportCommand.noResults { print("\n" + targets) }
  }

  /// The latest version heading of CHANGELOG.md (`## [0.9.0] - ...`), with `+unreleased` when an
  /// `[Unreleased]` section with entries comes before it.
  static func version() -> String {
    guard let text = try? String(contentsOfFile: repository + "/CHANGELOG.md", encoding: .utf8) else {
      return "unknown"
    }
    var unreleased = false
    var inUnreleased = false
    for line in text.split(separator: "\n") {
      if line.hasPrefix("## [Unreleased]") {
        inUnreleased = true
      } else if line.hasPrefix("## ["), let end = line.firstIndex(of: "]") {
        let version = String(line[line.index(line.startIndex, offsetBy: 4)..<end])
        return unreleased ? version + "+unreleased" : version
      } else if inUnreleased, line.hasPrefix("- ") {
        unreleased = true
      }
    }
    return unreleased ? "unreleased" : "unknown"
  }

  /// `git rev-parse HEAD`, `+dirty` when the product's sources have uncommitted changes: the
  /// benchmark's own code and the documents may change between a build and its run, the code
  /// measured may not.
  static func commit() -> String {
    guard let head = try? Subprocess.output("git", ["-C", repository, "rev-parse", "HEAD"]) else { return "unknown" }
    let status =
      (try? Subprocess.output("git", ["-C", repository, "status", "--porcelain", "--", "Sources", "Package.swift"]))
      ?? ""
    let commit = head.trimmingCharacters(in: .whitespacesAndNewlines)
    return status.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? commit : commit + "+dirty"
  }
}

/// Writes `data` to `path` atomically: a results file, the document, a chart.
func writeAtomically(_ data: Data, to path: String) throws {
  try explained("cannot write '\(path)'") { try data.write(to: URL(fileURLWithPath: path), options: .atomic) }
}

/// What `body` returns; when it throws, a `BenchError` of `failure` with the reason.
func explained<Result>(_ failure: @autoclosure () -> String, _ body: () throws -> Result) throws -> Result {
  do {
    return try body()
  } catch {
    throw BenchError("\(failure()): \(error.localizedDescription)")
  }
}

/// /proc/loadavg's first three fields: load over 1, 5 and 15 minutes.
enum LoadAverage {
  static func current() -> [Double] {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return text.split(separator: " ").prefix(3).compactMap { Double($0) }
  }
}

/// A thing timed several times: what `recovery` and `backup` write, one per row of their tables.
struct TimedRuns: Codable {
  let name: String
  /// Wall seconds of each run.
  let seconds: [Double]

  var median: Double { Statistics.median(seconds) }
}

import CaskEngine
import Foundation
import PeerKit

/// `cask-bench index`: what the in-memory index costs per key and how long an open from hints
/// takes, for keys of 16, 30 and 60 bytes (16 fits in an index slot; longer keys live in the
/// table's key arena). Values are 16 bytes so that building the stores stays quick; the index
/// does not depend on them.
enum IndexCommand: BenchCommand {
  static let name = "index"
  static let abstract = "Index memory per key and open time from hints, for keys of 16, 30 and 60 bytes."
  static let options: [(flag: String, help: String)] = [
    ("--keys N", "Keys in each store (default 1,000,000; at least 100)."),
    ("--dir DIR", "Where to build the stores (default /tmp)."),
    ResultsDestination.option,
  ]

  static let keyLengths = [16, 30, 60]
  static let opens = 3
  /// The targets: index memory at most 48 bytes plus the key's own; open of 1,000,000 keys from
  /// hints at most 0.5 s.
  static let overheadTarget = 48.0
  static let openTarget = 0.5

  /// One key length's figures.
  struct Row: Codable {
    let keyBytes: Int
    let keys: Int
    let openSeconds: [Double]
    let openMedianSeconds: Double
    let heapBytesPerKey: Double
    let rssBytesPerKey: Double
  }

  struct Figures: Codable {
    let overheadTarget: Double
    let openTarget: Double
    var rows: [Row] = []
  }

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let count = try options.number("--keys", atLeast: 100) ?? 1_000_000
    try options.measure { results, scratch in try results.write(measure(keys: count, in: scratch), size: count) }
  }

  static func measure(keys count: Int, in scratch: String) throws -> Figures {
    printToStandardError("index: \(Machine.current().summary)")
    var figures = Figures(overheadTarget: overheadTarget, openTarget: openTarget)
    var random = SeededGenerator(seed: 0x1DE)
    let values = EngineCommand.makeValues(count: 64, bytes: 16, using: &random)
    for length in keyLengths {
      let directory = "\(scratch)/keys-\(length).cask"
      printToStandardError("index: building \(Number.grouped(count)) keys of \(length) bytes")
      let keys = EngineCommand.makeKeys(count: count, length: length, using: &random)
      try EngineCommand.build(directory, keys: keys, values: values)
      printToStandardError("index: opening from hints, \(opens) times")
      let (open, memory) = try EngineCommand.measureOpens(
        directory, keys: count, keyBytes: length, hints: true, repeats: opens)
      figures.rows.append(
        Row(
          keyBytes: length, keys: count, openSeconds: open.seconds, openMedianSeconds: open.medianSeconds,
          heapBytesPerKey: memory.heapBytesPerKey, rssBytesPerKey: memory.rssBytesPerKey))
      try FileManager.default.removeItem(atPath: directory)
    }
    return figures
  }

  /// The table `index` prints and Docs/BENCHMARKS.md shows.
  static func table(_ figures: Figures) -> String {
    var table = Table([
      ("key bytes", .right), ("keys", .right), ("open s (median)", .right), ("heap B/key", .right),
      ("heap - key bytes", .right), ("RSS B/key", .right), ("targets met", .left),
    ])
    for row in figures.rows {
      let overhead = row.heapBytesPerKey - Double(row.keyBytes)
      // The open target is set for 1,000,000 keys; a smaller store's open says nothing of it.
      let openMet = row.keys < 1_000_000 || row.openMedianSeconds <= figures.openTarget
      table.append([
        "\(row.keyBytes)", Number.grouped(row.keys), Number.fixed(row.openMedianSeconds, 3),
        Number.fixed(row.heapBytesPerKey, 1), Number.fixed(overhead, 1), Number.fixed(row.rssBytesPerKey, 1),
        overhead <= figures.overheadTarget && openMet ? "yes" : "**no**",
      ])
    }
    return table.render()
  }
}

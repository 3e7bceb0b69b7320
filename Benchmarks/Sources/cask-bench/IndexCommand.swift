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
  static let usage = "cask-bench index [--keys N] [--dir DIR]"
  static let options: [(flag: String, help: String)] = [
    ("--keys N", "Keys in each store (default 1,000,000; at least 100)."),
    ("--dir DIR", "Where to build the stores (default: the temporary directory)."),
    ("-h, --help", "Show help information."),
  ]

  static let keyLengths = [16, 30, 60]
  static let opens = 3
  /// The targets: index memory at most 48 bytes plus the key's own, open from hints
  /// of 1,000,000 keys at most 0.5 s.
  static let overheadTarget = 48.0
  static let openTarget = 0.5

  static func run(arguments: [String]) throws {
    var options = Options(arguments)
    let keysArgument = try options.value("--keys")
    let base = try options.value("--dir") ?? FileManager.default.temporaryDirectory.path
    try options.finish()
    let count =
      try keysArgument.map { text -> Int in
        guard let value = Int(text.replacingOccurrences(of: ",", with: "")), value >= 100 else {
          throw UsageError("'--keys' needs a whole number of at least 100, not '\(text)'")
        }
        return value
      } ?? 1_000_000
    let scratch = try ScratchDirectory(in: base)
    defer { scratch.remove() }
    printToStandardError("index: \(Machine.current().summary)")
    var table = Table([
      ("key bytes", .right), ("keys", .right), ("open s (median of \(opens))", .right), ("heap B/key", .right),
      ("heap - key bytes", .right), ("RSS B/key", .right), ("targets met", .left),
    ])
    var random = SeededGenerator(seed: 0x1DE)
    let values = EngineCommand.makeValues(count: 64, bytes: 16, using: &random)
    for length in keyLengths {
      let directory = "\(scratch.path)/keys-\(length).cask"
      printToStandardError("index: building \(Number.grouped(Double(count))) keys of \(length) bytes")
      let keys = EngineCommand.makeKeys(count: count, length: length, using: &random)
      try EngineCommand.build(directory, keys: keys, values: values)
      printToStandardError("index: opening from hints, \(opens) times")
      let (open, memory) = try EngineCommand.measureOpens(
        directory, keys: count, keyBytes: length, hints: true, repeats: opens)
      let overhead = memory.heapBytesPerKey - Double(length)
      let openMet = count < 1_000_000 || open.medianSeconds <= openTarget
      table.append([
        "\(length)", Number.grouped(Double(count)), Number.fixed(open.medianSeconds, 3),
        Number.fixed(memory.heapBytesPerKey, 1), Number.fixed(overhead, 1), Number.fixed(memory.rssBytesPerKey, 1),
        overhead <= overheadTarget && openMet ? "yes" : "NO",
      ])
      try FileManager.default.removeItem(atPath: directory)
    }
    print(
      """
      cask-bench index: \(Machine.current().summary)
      Heap: growth of the heap in use (mallinfo2) across an open, per key; RSS likewise. Targets: \
      heap at most \(Int(overheadTarget)) B plus the key's bytes, open of 1,000,000 keys at most \(openTarget) s.

      \(table.render())
      """)
  }
}

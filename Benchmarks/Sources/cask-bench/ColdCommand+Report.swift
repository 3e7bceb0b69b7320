import Foundation
import PeerKit

/// `cold`'s tables and targets, as `cask-bench report` draws them from the results files.
extension ColdCommand {
  /// The sizes the targets are set for: the open at 1,000,000 events, the disk at 100,000.
  static let targetEvents = 1_000_000
  static let diskTargetEvents = 100_000

  /// Resident memory after the first page beyond the key directory's own figure (the heap the
  /// open of the same events without indexes keeps), medians of the runs.
  static func beyondKeyDirectory(_ figures: Figures) -> Double {
    Statistics.median(figures.rssBytes.map(Double.init))
      - Statistics.median(figures.keyDirectoryHeapBytes.map(Double.init))
  }

  static func megabytes(_ bytes: Int) -> String {
    Number.fixed(Double(bytes) / 1e6, 1)
  }

  /// One size's times, memory and disk; and the disk comparison, if this size has it.
  static func table(_ figures: Figures) -> String {
    let title = "\(Number.grouped(figures.events)) events, \(figures.indexes.count) indexes, ms"
    let times = ReportCommand.timedTable(title, figures.timed, unit: 1e3, decimals: 1)
    // The same layout as the times: each row's "seconds" are bytes here, drawn in MiB.
    let memory = ReportCommand.timedTable(
      "memory, MiB",
      [
        TimedRuns(name: "VmRSS before the open: the process alone", seconds: figures.rssBeforeBytes.map(Double.init)),
        TimedRuns(name: "VmRSS after the first page", seconds: figures.rssBytes.map(Double.init)),
        TimedRuns(name: "heap in use after it", seconds: figures.heapBytes.map(Double.init)),
        TimedRuns(
          name: "key directory: heap an open without indexes adds",
          seconds: figures.keyDirectoryHeapBytes.map(Double.init)),
        TimedRuns(name: "key directory: RSS it adds", seconds: figures.keyDirectoryRSSBytes.map(Double.init)),
        TimedRuns(name: "VmRSS beyond the key directory (medians)", seconds: [beyondKeyDirectory(figures)]),
      ], unit: 1 / Double(1 << 20), decimals: 1)
    var text =
      times.render() + "\n\n" + memory.render() + "\n\n"
      + "\(Number.grouped(figures.keys)) keys, \(figures.segmentsFromCheckpoint) segments from the"
      + " checkpoint; on disk \(megabytes(figures.diskIndexedBytes)) MB with the indexes, "
      + "\(megabytes(figures.diskPlainBytes)) MB without. The page's plan: `\(figures.plan)`."
    if let disk = figures.disk {
      var table = Table([
        ("\(Number.grouped(disk.events)) events on disk", .left), ("MB", .right), ("÷ without indexes", .right),
      ])
      for (label, bytes) in [
        ("CipherCask, \(disk.indexes.count) indexes (\(disk.indexes.joined(separator: ", ")))", disk.indexedBytes),
        ("CipherCask, no indexes", disk.plainBytes),
        ("SQLCipher, the same columns and indexes", disk.sqlcipherBytes),
      ] {
        table.append([label, megabytes(bytes), Number.fixed(Double(bytes) / Double(Swift.max(disk.plainBytes, 1)), 2)])
      }
      text += "\n\n" + table.render()
    }
    return text
  }

  /// The targets `cold` measures, once any of its files is there: "not measured" until a file
  /// of the target's size is.
  static func targets(_ files: [ResultsFile<Figures>]) -> [Target] {
    guard !files.isEmpty else { return [] }
    let at = "\(Number.grouped(targetEvents)) events"
    let cold = files.first { $0.figures.events == targetEvents }?.figures
    func milliseconds(_ name: String) -> Double? {
      cold?.timed.first { $0.name == name }.map { $0.median * 1e3 }
    }
    let disk = files.compactMap(\.figures.disk).first { $0.events == diskTargetEvents }
    return [
      Target(
        "open + first count() + first page, \(at), ms", at: at, required: 100, atMost: true,
        measured: milliseconds("in all")),
      Target(
        "RSS after it beyond the key directory, \(at), MiB", at: at, required: 64, atMost: true,
        measured: cold.map { beyondKeyDirectory($0) / Double(1 << 20) }),
      Target(
        "first save after open, \(at), ms", at: at, required: 5, atMost: true,
        measured: milliseconds("first save after open")),
      Target(
        "disk with \(CaskQuerySide.compositeIndexes.count) indexes ÷ without (cold)",
        at: "\(Number.grouped(diskTargetEvents)) events", required: 2.5, atMost: true,
        measured: disk.map { Double($0.indexedBytes) / Double(Swift.max($0.plainBytes, 1)) }),
    ]
  }
}

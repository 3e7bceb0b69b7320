import Foundation
import PeerKit

extension QueriesCommand {
  /// `median (min–max)` of per-round ratios `numerator[i] / denominator[i]`, or `—`.
  static func ratio(_ numerator: [Double]?, _ denominator: [Double]?) -> String {
    guard let numerator, let denominator, !numerator.isEmpty, numerator.count == denominator.count else { return "—" }
    let ratios = zip(numerator, denominator).map { $0 / max($1, 1e-12) }
    func text(_ value: Double) -> String { value < 10 ? Number.fixed(value, 2) : Number.grouped(value) }
    let middle = text(Statistics.median(ratios))
    guard ratios.count > 1, let low = ratios.min(), let high = ratios.max() else { return middle }
    return "\(middle) (\(text(low))–\(text(high)))"
  }

  static func microseconds(_ values: [Double]?) -> String {
    guard let values, !values.isEmpty else { return "—" }
    return Number.microseconds(Statistics.median(values))
  }

  static func report(events count: Int, cask: CaskQuerySide, figures: Figures, settings: Settings) -> String {
    let sqlcipher = figures.peers["sqlcipher"]
    let sealed = figures.peers["sqlite+rncryptor"]
    var table = Table([
      ("query (\(Number.grouped(Double(count))) events)", .left), ("CipherCask µs", .right), ("scan µs", .right),
      ("SQLCipher µs", .right), ("SQLite+RNC µs", .right), ("scan ÷ CC", .right), ("SQLCipher ÷ CC", .right),
      ("SQLite+RNC ÷ CC", .right), ("CipherCask's plan", .left),
    ])
    for (name, label) in EventQueries.workloads {
      let ours = figures.cask[name]
      table.append([
        label, microseconds(ours), microseconds(figures.scan[name]), microseconds(sqlcipher?[name]),
        microseconds(sealed?[name]), ratio(figures.scan[name], ours), ratio(sqlcipher?[name], ours),
        ratio(sealed?[name], ours), cask.explain(name),
      ])
    }
    let fill = [cask.fillSeconds / Double(count)]
    table.append([
      "fill, per event (batches of 2,000)", microseconds(fill), "—",
      microseconds(figures.peerFill["sqlcipher"].map { [$0] }),
      microseconds(figures.peerFill["sqlite+rncryptor"].map { [$0] }), "—",
      ratio(figures.peerFill["sqlcipher"].map { [$0] }, fill),
      ratio(figures.peerFill["sqlite+rncryptor"].map { [$0] }, fill), "\(cask.indexes.count) indexes",
    ])
    let setups = figures.peerSetups.sorted { $0.key < $1.key }.map { "- \($0.key): \($0.value)" }
    return table.render()
      + "\n\nMedians over \(settings.rounds) rounds of the medians of \(settings.runs) runs (indexed queries, "
      + "SQLCipher) or \(settings.scanRuns) (scans, SQLite+RNCryptor); ratios: median over rounds (lowest–highest "
      + "round). ÷ CC: the engine's time over CipherCask's (above 1, CipherCask is faster).\n"
      + "Open with \(cask.indexes.count) indexes: \(Number.fixed(cask.openSeconds * 1000, 1)) ms (heap "
      + "\(Number.grouped(cask.heapPerEventAfterOpen)) B per event, keys included); first queries (in-memory "
      + "entries built from the keys): \(Number.fixed(cask.firstQuerySeconds * 1000, 1)) ms.\n"
      + "Index entries: \(Number.fixed(cask.entriesPerEvent, 2)) per event (city, date, title, each distinct "
      + "attendee\(cask.indexes.count > 4 ? ", city and date" : "")); memory \(Number.grouped(cask.heapPerEntry)) B per entry in use; disk "
      + "\(Number.grouped(cask.diskPerEntry)) B per entry (\(Number.grouped(Double(cask.diskIndexed))) B with "
      + "the indexes, \(Number.grouped(Double(cask.diskPlain))) B without; before compaction).\n"
      + (setups.isEmpty ? "" : "Peers:\n" + setups.joined(separator: "\n") + "\n")
      + "Load average \(EngineCommand.loadAverage())."
  }
}

extension QueriesCommand {
  /// One query's seconds per round, per engine: what `cask-bench report` charts.
  struct QueryResult: Codable {
    let name: String
    let label: String
    /// CipherCask's plan for it (`explain`).
    let plan: String
    let cipherCask: [Double]
    /// The closure scan over the same collection, when scans were run.
    let scan: [Double]?
    /// Each SQL peer's seconds per round.
    let peers: [String: [Double]]
  }

  /// The figures of one collection size, written to `queries-<events>.json`.
  struct Results: Codable {
    let events: Int
    let rounds: Int
    let runs: Int
    let scanRuns: Int
    let indexes: Int
    let queries: [QueryResult]
    /// Seconds per event of filling the collection (batches of 2,000), CipherCask and each peer.
    let fillSeconds: [String: Double]
    let openSeconds: Double
    let firstQuerySeconds: Double
    let heapBytesPerEventAfterOpen: Double
    let entriesPerEvent: Double
    let heapBytesPerEntry: Double
    let diskBytesPerEntry: Double
    let peerSetups: [String: String]
  }

  static func results(events count: Int, cask: CaskQuerySide, figures: Figures, settings: Settings) -> Results {
    let queries = EventQueries.workloads.map { name, label in
      QueryResult(
        name: name, label: label, plan: cask.explain(name), cipherCask: figures.cask[name] ?? [],
        scan: figures.scan[name], peers: figures.peers.compactMapValues { $0[name] })
    }
    var fill = figures.peerFill
    fill["ciphercask"] = cask.fillSeconds / Double(count)
    return Results(
      events: count, rounds: settings.rounds, runs: settings.runs, scanRuns: settings.scanRuns,
      indexes: cask.indexes.count, queries: queries, fillSeconds: fill, openSeconds: cask.openSeconds,
      firstQuerySeconds: cask.firstQuerySeconds, heapBytesPerEventAfterOpen: cask.heapPerEventAfterOpen,
      entriesPerEvent: cask.entriesPerEvent, heapBytesPerEntry: cask.heapPerEntry, diskBytesPerEntry: cask.diskPerEntry,
      peerSetups: figures.peerSetups)
  }
}

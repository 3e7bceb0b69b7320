import Foundation
import PeerKit

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
    /// The same events' stores, with the indexes and without, closed (`nil` in files written
    /// before they were recorded).
    var diskBytesIndexed: Int?
    var diskBytesPlain: Int?
    /// Saves and updates with 0, 1 and 3 indexes into 10,000 events (`writeCosts`).
    var writeCosts: [WriteCost]?
  }

  static func results(
    events count: Int, cask: CaskQuerySide, figures: Figures, settings: Settings, writeCosts: [WriteCost]
  ) -> Results {
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
      peerSetups: figures.peerSetups, diskBytesIndexed: cask.diskIndexed, diskBytesPlain: cask.diskPlain,
      writeCosts: writeCosts)
  }
}

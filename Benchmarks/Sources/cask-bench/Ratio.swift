import Foundation
import PeerKit

/// The one way a comparison shows CipherCask beside its peers: CipherCask's operations a
/// second ÷ the peer's (above 1×, CipherCask is faster), worked out by `speedup` and written by
/// `text`, in the tables `report` writes and the subcommands print, and in the charts.
enum Ratio {
  /// `0.052×`, `1.85×`, `1,234×`; `—` when there is no ratio.
  static func text(_ value: Double?) -> String {
    guard let value, value.isFinite else { return "—" }
    if value < 0.1 { return Number.fixed(value, 3) + "×" }
    return value < 10 ? Number.fixed(value, 2) + "×" : Number.grouped(value) + "×"
  }

  /// A table with a row per workload (its label and name): CipherCask's operations a second,
  /// then CipherCask ÷ each peer (`—` for a peer without figures).
  static func table(
    _ title: String, ours: GatheredEngine?, peers: [(name: String, figures: GatheredEngine?)],
    rows: [(label: String, workload: String)]
  ) -> Table {
    var table = Table([(title, .left), ("CipherCask ops/s", .right)] + peers.map { ("÷ \($0.name)", .right) })
    for row in rows {
      table.append(
        [row.label, (ours?.workload(row.workload)?.opsPerSecond).map { Number.grouped($0) } ?? "—"]
          + peers.map { text(ours?.speedup(row.workload, over: $0.figures)) })
    }
    return table
  }
}

extension GatheredEngine {
  /// This engine's operations a second in `workload` ÷ `other`'s; `nil` when either has no
  /// figure for it.
  func speedup(_ workload: String, over other: GatheredEngine?) -> Double? {
    guard let ours = self.workload(workload), let theirs = other?.workload(workload), theirs.opsPerSecond > 0 else {
      return nil
    }
    return ours.opsPerSecond / theirs.opsPerSecond
  }
}

extension [GatheredEngine] {
  /// The engine named `name`, if it ran.
  func named(_ name: String) -> GatheredEngine? {
    first { $0.engine == name }
  }
}

import Foundation
import PeerKit

extension PeersCommand {
  /// Throughput workloads, in table order.
  static let throughputWorkloads = [
    KVWorkload.fillseq, KVWorkload.fillrandom, KVWorkload.overwrite, KVWorkload.readrandom, KVWorkload.readmissing,
    KVWorkload.readwhilewriting, KVWorkload.deleterandom,
  ]

  // MARK: Targets

  static func targets(_ report: Report) -> [PeerTarget] {
    guard let largest = report.sizes.max(by: { $0.keys < $1.keys }) else { return [] }
    let at = "\(Number.grouped(Double(largest.keys))) keys"
    let cask = largest.engine(cipherCask.name)
    func ratio(_ workload: String, _ peer: String) -> Double? {
      cask?.speedup(workload, over: largest.engine(peer))
    }
    func durableRatio(_ peer: String) -> Double? {
      report.durable.named(cipherCask.name)?.speedup(KVWorkload.durable8, over: report.durable.named(peer))
    }
    var targets: [PeerTarget] = []
    for workload in [KVWorkload.fillrandom, KVWorkload.readrandom] {
      for peer in ["sqlite+rncryptor", "sqlcipher"] {
        targets.append(
          PeerTarget("\(workload): CipherCask ÷ \(peer)", at: at, required: 2, measured: ratio(workload, peer)))
      }
    }
    for peer in ["lmdb+rncryptor", "leveldb+rncryptor"] {
      for workload in [KVWorkload.fillrandom, KVWorkload.overwrite] {
        targets.append(
          PeerTarget("\(workload): CipherCask ÷ \(peer) (ahead)", at: at, required: 1, measured: ratio(workload, peer)))
      }
      targets.append(
        PeerTarget(
          "durable puts, 8 writers: CipherCask ÷ \(peer) (ahead)", at: "durable", required: 1,
          measured: durableRatio(peer)))
    }
    targets.append(
      PeerTarget(
        "readrandom: CipherCask ÷ lmdb+rncryptor (within 20%)", at: at, required: 0.8,
        measured: ratio(KVWorkload.readrandom, "lmdb+rncryptor")))
    targets.append(
      PeerTarget(
        "open (plus one get), seconds", at: at, required: 1, atMost: true,
        measured: cask?.workload(KVWorkload.open)?.medianSeconds))
    targets.append(
      PeerTarget(
        "space amplification after overwrite + compaction", at: at, required: 1.2, atMost: true,
        measured: cask?.amplificationAfterCompaction))
    return targets
  }

  // MARK: Rendering

  /// What the run prints: how it ran, the tables Docs/BENCHMARKS.md shows, the per-value
  /// PBKDF2 design's sample, and the targets.
  static func render(_ report: Report) -> String {
    var out: [String] = []
    let settings = report.settings
    out.append("Machine: \(report.machine.summary); \(report.date)")
    out.append(
      "Keys: 16 bytes (hex), values: 1 KiB random; durability never (durable puts: always); runs per median: "
        + report.sizes.map { "\($0.runs) at \(Number.grouped(Double($0.keys)))" }.joined(separator: ", ")
        + "; seed \(settings.seed)")
    if let cap = settings.writeOperations {
      out.append(
        "overwrite and deleterandom: at most \(Number.grouped(Double(cap))) operations per store (random keys), so"
          + " 'after overwrite' disk usage is after overwriting that many keys")
    }
    out.append("")
    out.append("Engines:")
    for engine in report.sizes.first?.engines ?? report.durable {
      out.append("- \(engine.engine): \(engine.setup)")
    }
    out += ["", ReportCommand.peersTables(report)]
    let seed = seedTable(report)
    if !seed.rows.isEmpty {
      out += ["", "### the per-value PBKDF2 design (\(settings.seedSample) keys)", "", seed.render()]
    }
    out += ["", "### targets", "", PeerTarget.table(report.targets)]
    return out.joined(separator: "\n")
  }

  static func seedTable(_ report: Report) -> Table {
    var table = Table([
      ("workload", .left), ("engine", .left), ("ops/s", .right), ("p50 ms", .right), ("CipherCask ÷ engine", .right),
    ])
    guard !report.seedSample.isEmpty, let smallest = report.sizes.min(by: { $0.keys < $1.keys }),
      let cask = smallest.engine(cipherCask.name)
    else { return table }
    for workload in [KVWorkload.fillrandom, KVWorkload.readrandom] {
      guard let ours = cask.workload(workload) else { continue }
      table.append([
        workload, "ciphercask (\(Number.grouped(Double(smallest.keys))) keys)", Number.grouped(ours.opsPerSecond),
        Number.fixed(ours.p50 * 1e3, 4), "1.00×",
      ])
      for engine in report.seedSample {
        guard let figures = engine.workload(workload) else { continue }
        table.append([
          workload, "\(engine.engine) (\(engine.keys) keys)", Number.grouped(figures.opsPerSecond),
          Number.fixed(figures.p50 * 1e3, 2), Ratio.text(ours.opsPerSecond / figures.opsPerSecond),
        ])
      }
    }
    return table
  }
}

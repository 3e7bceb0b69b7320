import Foundation
import PeerKit

extension PeersCommand {
  /// Throughput workloads, in table order.
  static let throughputWorkloads = [
    KVWorkload.fillseq, KVWorkload.fillrandom, KVWorkload.overwrite, KVWorkload.readrandom, KVWorkload.readmissing,
    KVWorkload.readwhilewriting, KVWorkload.deleterandom,
  ]

  // MARK: Targets

  /// The sizes the open target is set for.
  static let openTargetSizes = [10_000, 100_000, 1_000_000]

  /// Each target at the largest size whose figures have it: a size run for some workloads only
  /// (the opens at 1,000,000 keys) leaves the other targets to the sizes that ran theirs.
  static func targets(_ report: Report) -> [Target] {
    guard !report.sizes.isEmpty else { return [] }
    let sizes = report.sizes.sorted { $0.keys > $1.keys }
    func keys(_ count: Int) -> String { "\(Number.grouped(count)) keys" }
    func target(
      _ name: String, required: Double, atMost: Bool = false, _ measure: (GatheredEngine?, SizeResult) -> Double?
    ) -> Target {
      let size = sizes.first { measure($0.engine(cipherCask.name), $0) != nil } ?? sizes[0]
      return Target(
        name, at: keys(size.keys), required: required, atMost: atMost,
        measured: measure(size.engine(cipherCask.name), size))
    }
    func ratio(_ workload: String, _ peer: String) -> (GatheredEngine?, SizeResult) -> Double? {
      { cask, size in cask?.speedup(workload, over: size.engine(peer)) }
    }
    func durableRatio(_ peer: String) -> Double? {
      report.durable.named(cipherCask.name)?.speedup(KVWorkload.durable8, over: report.durable.named(peer))
    }
    var targets: [Target] = []
    for workload in [KVWorkload.fillrandom, KVWorkload.readrandom] {
      for peer in ["sqlite+rncryptor", "sqlcipher"] {
        targets.append(target("\(workload): CipherCask ÷ \(peer)", required: 2, ratio(workload, peer)))
      }
    }
    for peer in ["lmdb+rncryptor", "leveldb+rncryptor"] {
      for workload in [KVWorkload.fillrandom, KVWorkload.overwrite] {
        targets.append(target("\(workload): CipherCask ÷ \(peer) (ahead)", required: 1, ratio(workload, peer)))
      }
      targets.append(
        Target(
          "durable puts, 8 writers: CipherCask ÷ \(peer) (ahead)", at: "durable", required: 1,
          measured: durableRatio(peer)))
    }
    targets.append(
      target(
        "readrandom: CipherCask ÷ lmdb+rncryptor (within 20%)", required: 0.8,
        ratio(KVWorkload.readrandom, "lmdb+rncryptor")))
    targets.append(
      target("open (plus one get), seconds", required: 1, atMost: true) { cask, _ in
        cask?.workload(KVWorkload.open)?.medianSeconds
      })
    targets.append(
      target("space amplification after overwrite + compaction", required: 1.2, atMost: true) { cask, _ in
        cask?.workload(KVWorkload.compact) == nil ? nil : cask?.amplificationAfterCompaction
      })
    // One row per size: the lower of the two ratios, since the target is to open at least as
    // fast as both.
    for count in openTargetSizes {
      let size = report.sizes.first { $0.keys == count }
      let ratios = ["sqlite+rncryptor", "lmdb+rncryptor"].map { peer in
        ReportCommand.openRatio(size?.engine(cipherCask.name), size?.engine(peer))
      }
      targets.append(
        Target(
          "open, derivation left out: sqlite+rncryptor and lmdb+rncryptor ÷ CipherCask (the lower), \(keys(count))",
          at: keys(count), required: 1, measured: ratios.contains { $0 == nil } ? nil : ratios.compactMap { $0 }.min()))
    }
    return targets
  }
}

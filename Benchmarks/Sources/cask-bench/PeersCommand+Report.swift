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
}

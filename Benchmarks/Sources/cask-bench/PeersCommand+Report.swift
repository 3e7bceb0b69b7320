import Foundation
import PeerKit

extension PeersCommand {
  /// Throughput workloads, in table order, with what their table is called.
  static let throughputWorkloads: [(name: String, title: String)] = [
    (KVWorkload.fillseq, "fillseq: puts in ascending key order, in transactions of 1000"),
    (KVWorkload.fillrandom, "fillrandom: puts in random order, in transactions of 1000"),
    (KVWorkload.overwrite, "overwrite: every key once more, random order, one put per transaction"),
    (KVWorkload.readrandom, "readrandom: every key once, random order, hot"),
    (KVWorkload.readmissing, "readmissing: keys never written"),
    (KVWorkload.readwhilewriting, "readwhilewriting: the reader's gets while one thread overwrites at --rww-rate"),
    (KVWorkload.deleterandom, "deleterandom: every key, random order, one delete per transaction"),
  ]

  // MARK: Targets

  static func targets(_ report: Report) -> [PeerTarget] {
    guard let largest = report.sizes.max(by: { $0.keys < $1.keys }) else { return [] }
    let at = "\(Number.grouped(Double(largest.keys))) keys"
    func ratio(_ workload: String, _ peer: String, in size: SizeResult = largest) -> Double? {
      guard let ours = size.engine(cipherCask.name)?.workload(workload)?.opsPerSecond,
        let theirs = size.engine(peer)?.workload(workload)?.opsPerSecond, theirs > 0
      else { return nil }
      return ours / theirs
    }
    func durableRatio(_ peer: String) -> Double? {
      guard let ours = report.durable.first(where: { $0.engine == cipherCask.name })?.workload(KVWorkload.durable8),
        let theirs = report.durable.first(where: { $0.engine == peer })?.workload(KVWorkload.durable8)
      else { return nil }
      return ours.opsPerSecond / theirs.opsPerSecond
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
    let cask = largest.engine(cipherCask.name)
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
    for engine in report.sizes.first?.engines ?? [] {
      out.append("- \(engine.engine): \(engine.setup)")
    }
    var sections: [(title: String, table: Table)] = throughputWorkloads.map {
      ("\($0.title)", throughputTable(report, workload: $0.name))
    }
    sections.append(("durable puts: every put synced before it returns", durableTable(report)))
    sections.append(
      ("open: open a store filled and overwritten, plus one get", openTable(report)))
    sections.append(
      ("disk usage: after overwrite (every key written twice) and after each engine's compaction", spaceTable(report)))
    sections.append(("peak RSS of each engine's process", memoryTable(report)))
    sections.append(("the per-value PBKDF2 design (\(settings.seedSample) keys)", seedTable(report)))
    for section in sections where !section.table.rows.isEmpty {
      out.append("")
      out.append("### \(section.title)")
      out.append("")
      out.append(section.table.render())
    }
    out.append("")
    out.append("### targets")
    out.append("")
    out.append(PeerTarget.table(report.targets))
    return out.joined(separator: "\n")
  }

  static func ratioText(_ ratio: Double?) -> String {
    guard let ratio, ratio.isFinite else { return "—" }
    return ratio >= 100 ? Number.grouped(ratio) + "×" : Number.fixed(ratio, 2) + "×"
  }

  static func throughputTable(_ report: Report, workload: String) -> Table {
    var table = Table([
      ("keys", .right), ("engine", .left), ("ops/s", .right), ("p50 µs", .right), ("p99 µs", .right),
      ("CipherCask ÷ engine", .right),
    ])
    for size in report.sizes {
      let ours = size.engine(cipherCask.name)?.workload(workload)?.opsPerSecond
      for engine in size.engines {
        guard let figures = engine.workload(workload) else { continue }
        table.append([
          Number.grouped(Double(size.keys)), engine.engine, Number.grouped(figures.opsPerSecond),
          Number.microseconds(figures.p50), Number.microseconds(figures.p99),
          ratioText(ours.map { $0 / figures.opsPerSecond }),
        ])
      }
    }
    return table
  }

  static func durableTable(_ report: Report) -> Table {
    var table = Table([
      ("writers", .right), ("engine", .left), ("puts/s", .right), ("p50 ms", .right), ("p99 ms", .right),
      ("CipherCask ÷ engine", .right),
    ])
    for (writers, workload) in [(1, KVWorkload.durable1), (8, KVWorkload.durable8)] {
      let ours = report.durable.first { $0.engine == cipherCask.name }?.workload(workload)?.opsPerSecond
      for engine in report.durable {
        guard let figures = engine.workload(workload) else { continue }
        table.append([
          String(writers), engine.engine, Number.grouped(figures.opsPerSecond), Number.fixed(figures.p50 * 1e3, 2),
          Number.fixed(figures.p99 * 1e3, 2), ratioText(ours.map { $0 / figures.opsPerSecond }),
        ])
      }
    }
    return table
  }

  /// A workload done once per run (open): its median time, and the engine's time over ours.
  /// `open` beside the password derivation it includes, timed alone in the same process
  /// (one PBKDF2 pair for CipherCask's `.rncryptor` header and for the `+rncryptor` peers),
  /// and the open without it: what the engines themselves cost. SQLCipher derives inside the
  /// library, so nothing is subtracted from its figure.
  static func openTable(_ report: Report) -> Table {
    var table = Table([
      ("keys", .right), ("engine", .left), ("ms", .right), ("CipherCask ÷ engine (speed)", .right),
      ("derivation ms", .right), ("ms without it", .right), ("CipherCask ÷ engine, without", .right),
    ])
    func withoutDerivation(_ engine: GatheredEngine) -> Double? {
      guard let open = engine.workload(KVWorkload.open)?.medianSeconds else { return nil }
      let derivation = engine.workload(KVWorkload.openKeyDerivation)?.medianSeconds ?? 0
      return max(open - derivation, 0)
    }
    for size in report.sizes {
      let cask = size.engine(cipherCask.name)
      let ours = cask?.workload(KVWorkload.open)?.medianSeconds
      let oursWithout = cask.flatMap(withoutDerivation)
      for engine in size.engines {
        guard let figures = engine.workload(KVWorkload.open) else { continue }
        let derivation = engine.workload(KVWorkload.openKeyDerivation)?.medianSeconds
        let without = withoutDerivation(engine)
        table.append([
          Number.grouped(Double(size.keys)), engine.engine, Number.fixed(figures.medianSeconds * 1e3, 1),
          ratioText(ours.map { figures.medianSeconds / $0 }), derivation.map { Number.fixed($0 * 1e3, 1) } ?? "—",
          without.map { Number.fixed($0 * 1e3, 1) } ?? "—",
          ratioText(oursWithout.flatMap { ours in without.map { $0 / max(ours, 1e-6) } }),
        ])
      }
    }
    return table
  }

  static func spaceTable(_ report: Report) -> Table {
    var table = Table([
      ("keys", .right), ("engine", .left), ("MiB after overwrite", .right), ("amplification", .right),
      ("compaction", .left), ("compaction s", .right), ("MiB after", .right), ("amplification after", .right),
    ])
    let mebibyte = Double(1 << 20)
    for size in report.sizes {
      for engine in size.engines {
        guard let overwrite = engine.amplificationAfterOverwrite, let compacted = engine.amplificationAfterCompaction
        else { continue }
        let compaction = engine.workload(KVWorkload.compact)
        table.append([
          Number.grouped(Double(size.keys)), engine.engine,
          Number.fixed(PeerStatistics.median(engine.bytesAfterOverwrite) / mebibyte, 1), Number.fixed(overwrite, 2),
          engine.compactionSupported ? engine.compaction : "none",
          engine.compactionSupported ? (compaction.map { Number.fixed($0.medianSeconds, 2) } ?? "—") : "—",
          Number.fixed(PeerStatistics.median(engine.bytesAfterCompaction) / mebibyte, 1), Number.fixed(compacted, 2),
        ])
      }
    }
    return table
  }

  static func memoryTable(_ report: Report) -> Table {
    var table = Table([
      ("keys", .right), ("engine", .left), ("peak RSS MiB", .right), ("harness MiB", .right),
      ("peak − harness MiB", .right),
    ])
    let mebibyte = Double(1 << 20)
    for size in report.sizes {
      for engine in size.engines {
        table.append([
          Number.grouped(Double(size.keys)), engine.engine, Number.fixed(Double(engine.peakRSSBytes) / mebibyte, 1),
          Number.fixed(Double(engine.harnessRSSBytes) / mebibyte, 1),
          Number.fixed(Double(engine.peakRSSBytes - engine.harnessRSSBytes) / mebibyte, 1),
        ])
      }
    }
    return table
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
          Number.fixed(figures.p50 * 1e3, 2), ratioText(ours.opsPerSecond / figures.opsPerSecond),
        ])
      }
    }
    return table
  }
}

import Foundation
import PeerKit

/// `cask-bench objects`: collections of `BenchObject` in CipherCask (binary coder, JSON,
/// property lists) beside SQLite with RNCryptor rows, SQLCipher's plain rows, and the
/// per-object PBKDF2 design on a small sample (`ObjectRunner`'s workloads); then, in this
/// process, `all()` of 10,000 objects alone in a store and in a crowded one (+Isolation).
enum ObjectsCommand: BenchCommand {
  static let name = "objects"
  static let abstract =
    "Codable collections: CipherCask beside SQLite with RNCryptor rows and the per-value PBKDF2 design."
  static let options: [(flag: String, help: String)] = [
    (
      "--quick",
      "2,000 objects, one run, a 20-object sample of the per-value PBKDF2 design, a 100,000-key crowded store: noisy."
    ),
    ("--objects N", "Objects in each collection (default 10000)."),
    ("--runs N", "Runs behind each median (default 5)."),
    (
      "--store-keys N",
      "Keys in the crowded store where all() of 10,000 objects is timed against the same objects alone"
        + " (default 1000000)."
    ),
    ("--dir DIR", "Where the temporary stores go (default /tmp)."),
    ResultsDestination.option,
  ]

  static let cipherCask = PeerEngine.cipherCask
  static let engines: [PeerEngine] = [
    cipherCask, "ciphercask+json", "ciphercask+plist", "sqlite+rncryptor", "sqlcipher",
  ]
  static let seedDesign = PeersCommand.seedDesign
  static let workloads = ["save", "save-batch", "get", "all", "filter"]

  struct Settings: Codable {
    let objects: Int
    let runs: Int
    let sample: Int
    let durability: String
    let seed: UInt64
  }

  struct Report: Codable {
    let settings: Settings
    var engines: [GatheredEngine] = []
    var seedSample: GatheredEngine?
    var targets: [Target] = []
    /// `all()` alone and in a crowded store (the isolation cost rule).
    var isolation: Isolation?
  }

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    let objects = try options.positive("--objects") ?? (quick ? 2_000 : 10_000)
    let runs = try options.positive("--runs") ?? (quick ? 1 : 5)
    // Each save and get of the per-value PBKDF2 design runs PBKDF2: a small sample of it.
    let sample = quick ? 20 : 100
    let storeKeys =
      try options.positive("--store-keys") ?? (quick ? 100_000 : 1_000_000)
    try options.measure { results, scratch in
      try PeerProcess.checkBuilt((engines + [seedDesign]).map(\.executable))
      var system = SystemRandomNumberGenerator()
      let settings = Settings(
        objects: objects, runs: runs, sample: sample, durability: "never", seed: system.next() >> 1)
      var report = Report(settings: settings)
      func request(_ engine: PeerEngine, size: Int) -> PeerRequest {
        PeerRequest(.objects, engine: engine.name, size: size, directory: scratch, seed: settings.seed)
      }

      report.engines = try PeerProcess.rounds(engines, rounds: runs, label: "objects") {
        request($0, size: objects)
      }
      report.seedSample = try PeerProcess.rounds(
        [seedDesign], rounds: 1, label: "objects: the per-object PBKDF2 design on \(sample) objects"
      ) {
        var saveAndGet = request($0, size: sample)
        saveAndGet.saveAndGetOnly = true
        return saveAndGet
      }.first
      let isolation = try measureIsolation(
        storeKeys: storeKeys, runs: Swift.max(runs, 3), seed: settings.seed, directory: scratch)
      report.isolation = isolation
      report.targets = targets(report) + [isolationTarget(isolation)]

      try results.write(report, size: objects)
    }
  }

  /// The engines CipherCask is set beside: the other coders, the SQL peers, the PBKDF2 sample.
  static func peers(_ report: Report) -> [GatheredEngine] {
    report.engines.filter { $0.engine != cipherCask.name } + (report.seedSample.map { [$0] } ?? [])
  }

  static func ratio(_ report: Report, _ workload: String, _ peer: GatheredEngine?) -> Double? {
    report.engines.named(cipherCask.name)?.speedup(workload, over: peer)
  }

  static func targets(_ report: Report) -> [Target] {
    let objects = "\(Number.grouped(report.settings.objects)) objects"
    let ours = report.engines.first { $0.engine == cipherCask.name }
    let seedTargets = ["save", "get"].map { workload in
      Target(
        "\(workload): CipherCask ÷ the per-object PBKDF2 design",
        at: "\(objects) vs a \(report.settings.sample)-object sample",
        required: 1_000, measured: ratio(report, workload, report.seedSample))
    }
    // The default binary coder against the same collection with JSONCaskCoder: `all()`, `get`
    // and `save(contentsOf:)`, as the targets name them (single saves, where the engine's own
    // write per object leaves the coder a smaller share, are in the save table); and its
    // single objects a second (shown as a multiple of 100,000).
    let json = report.engines.first { $0.engine == "ciphercask+json" }
    let coderTargets = [("all", 3.0), ("get", 2.0), ("save-batch", 2.0)].map { workload, required in
      Target(
        "\(workload == "save-batch" ? "save(contentsOf:)" : workload): BinaryCaskCoder ÷ JSONCaskCoder", at: objects,
        required: required, measured: ours?.speedup(workload, over: json))
    }
    let rateTargets = ["save", "get"].map { workload in
      Target(
        "\(workload): objects a second with BinaryCaskCoder ÷ 100,000", at: objects, required: 1,
        measured: ours?.workload(workload).map { $0.opsPerSecond / 100_000 })
    }
    // Single objects ahead of the SQL peers holding the same objects.
    let peerTargets = ["sqlite+rncryptor", "sqlcipher"].flatMap { peer in
      ["save", "get"].map { workload in
        Target(
          "\(workload): CipherCask ÷ \(peer)", at: objects, required: 1,
          measured: ratio(report, workload, report.engines.first { $0.engine == peer }))
      }
    }
    return seedTargets + coderTargets + rateTargets + peerTargets
  }

  static func panel(_ report: Report) -> RatioChart.Panel {
    let peers = peers(report)
    return RatioChart.Panel(
      title: "\(Number.grouped(report.settings.objects)) objects", groups: workloads,
      series: peers.map(\.engine),
      values: workloads.map { workload in peers.map { ratio(report, workload, $0) } })
  }
}

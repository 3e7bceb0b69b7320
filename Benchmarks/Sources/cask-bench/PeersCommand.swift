import Foundation
import PeerKit

/// `cask-bench peers`: CipherCask beside SQLite+RNCryptor, SQLCipher, LMDB and LevelDB (plain
/// and with RNCryptor per value), each in its own process, on the same keys, values, orders and
/// durability: `KVRunner`'s workloads at each size, durable puts from 1 and 8 writers, disk
/// usage, peak RSS, and on a small sample the per-value PBKDF2 design.
enum PeersCommand: BenchCommand {
  static let name = "peers"
  static let abstract = "CipherCask beside SQLite, SQLCipher, LMDB and LevelDB: db_bench workloads, ratios."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "Every workload at 10,000 keys, one run, few durable puts: for CI; the figures are noisy."),
    ("--keys N[,N...]", "Store sizes (default 10000,100000,1000000)."),
    ("--runs N", "Runs behind each median at sizes up to 200,000 keys (default 5; 1 with --quick)."),
    ("--large-runs N", "Runs behind each median above 200,000 keys (default 3)."),
    (
      "--workloads LIST",
      "Comma-separated workloads (default all): " + (KVWorkload.all + ["durable", "seed"]).joined(separator: ",") + ".",
    ),
    ("--peers LIST", "Comma-separated engines to compare (default all): " + peerNames.joined(separator: ",") + "."),
    ("--dir DIR", "Where the temporary stores go (default /tmp); the disk there is the one measured."),
    ResultsDestination.option,
  ]

  static let cipherCask = PeerEngine.cipherCask
  static let peers: [PeerEngine] = [
    "sqlite+rncryptor", "sqlcipher", "lmdb", "lmdb+rncryptor", "leveldb", "leveldb+rncryptor",
  ]
  static var peerNames: [String] { peers.map(\.name) }
  /// The per-value PBKDF2 design, measured on `Settings.seedSample` keys only.
  static let seedDesign: PeerEngine = "sqlite+pbkdf2"

  struct Settings: Codable {
    let quick: Bool
    let sizes: [Int]
    let runs: Int
    let largeRuns: Int
    let largeSize: Int
    /// readwhilewriting's writer's puts a second.
    let readWhileWritingRate: Int
    /// The workloads run at each size; whether durable puts and the PBKDF2 design are measured.
    let workloads: [String]
    let durablePuts: Bool
    let seedDesign: Bool
    let peers: [String]
    let durability: String
    let durablePuts1: Int
    let durablePuts8: Int
    let durableRuns: Int
    let seedSample: Int
    let seedRuns: Int
    let directory: String
    let seed: UInt64

    func runs(for keys: Int) -> Int {
      keys > largeSize ? largeRuns : runs
    }
  }

  struct SizeResult: Codable {
    let keys: Int
    let runs: Int
    var engines: [GatheredEngine]

    func engine(_ name: String) -> GatheredEngine? {
      engines.first { $0.engine == name }
    }
  }

  struct Report: Codable {
    let settings: Settings
    var sizes: [SizeResult] = []
    var durable: [GatheredEngine] = []
    var seedSample: [GatheredEngine] = []
    var targets: [Target] = []
  }

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    let sizes = try options.numbers("--keys", atLeast: 1_000) ?? (quick ? [10_000] : [10_000, 100_000, 1_000_000])
    let runs = try options.positive("--runs") ?? (quick ? 1 : 5)
    let largeRuns = try options.positive("--large-runs") ?? 3
    let workloads =
      try options.names("--workloads", from: KVWorkload.all + ["durable", "seed"])
      ?? KVWorkload.all + ["durable", "seed"]
    let selected = try options.names("--peers", from: peerNames) ?? peerNames
    try options.measure { results, scratch in
      let engines = [cipherCask] + peers.filter { selected.contains($0.name) }
      try PeerProcess.checkBuilt(engines.map(\.executable) + [seedDesign.executable])

      var system = SystemRandomNumberGenerator()
      let settings = Settings(
        quick: quick, sizes: sizes, runs: runs, largeRuns: largeRuns, largeSize: 200_000,
        readWhileWritingRate: KVWorkload.readWhileWritingRate,
        workloads: workloads.filter { KVWorkload.all.contains($0) },
        durablePuts: workloads.contains("durable"), seedDesign: workloads.contains("seed"), peers: selected,
        durability: "never (durable puts: always)", durablePuts1: quick ? 20 : 200, durablePuts8: quick ? 48 : 400,
        durableRuns: quick ? 1 : 5, seedSample: quick ? 20 : 100, seedRuns: quick ? 1 : 3,
        directory: URL(fileURLWithPath: scratch).deletingLastPathComponent().path,
        seed: system.next() >> 1)
      var report = try measure(settings, engines: engines, scratch: scratch)
      report.targets = targets(report)
      try write(report, to: results)
    }
  }

  /// `peers-10000.json` per size, and `peers-durable.json` for durable puts and the PBKDF2 design.
  static func write(_ report: Report, to results: ResultsDestination) throws {
    for size in report.sizes {
      var one = report
      one.sizes = [size]
      one.durable = []
      one.seedSample = []
      one.targets = targets(one)
      try results.write(one, size: size.keys)
    }
    if !report.durable.isEmpty || !report.seedSample.isEmpty {
      var rest = report
      rest.sizes = []
      rest.targets = targets(rest)
      try results.write(rest, name: "durable")
    }
  }

  /// Each size's workloads, the durable puts, then the PBKDF2 design on its small sample.
  static func measure(_ settings: Settings, engines: [PeerEngine], scratch: String) throws -> Report {
    var report = Report(settings: settings)
    func request(_ mode: PeerRequest.Mode, _ engine: PeerEngine, size: Int) -> PeerRequest {
      PeerRequest(mode, engine: engine.name, size: size, directory: scratch, seed: settings.seed)
    }
    for keys in settings.sizes where !settings.workloads.isEmpty {
      let runs = settings.runs(for: keys)
      let gathered = try PeerProcess.rounds(engines, rounds: runs, label: "peers: \(keys) keys") { engine in
        var kv = request(.kv, engine, size: keys)
        kv.workloads = settings.workloads
        return kv
      }
      report.sizes.append(SizeResult(keys: keys, runs: runs, engines: gathered))
    }
    if settings.durablePuts {
      report.durable = try PeerProcess.rounds(engines, rounds: settings.durableRuns, label: "peers: durable puts") {
        var durable = request(.durable, $0, size: max(settings.durablePuts1, settings.durablePuts8))
        durable.durablePuts1 = settings.durablePuts1
        durable.durablePuts8 = settings.durablePuts8
        return durable
      }
    }
    if settings.seedDesign {
      report.seedSample = try PeerProcess.rounds(
        [seedDesign], rounds: settings.seedRuns,
        label: "peers: the per-value PBKDF2 design on \(settings.seedSample) keys"
      ) {
        var kv = request(.kv, $0, size: settings.seedSample)
        kv.workloads = [KVWorkload.fillrandom, KVWorkload.readrandom]
        return kv
      }
    }
    return report
  }
}

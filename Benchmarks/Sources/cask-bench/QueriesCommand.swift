import CipherCask
import Foundation
import PeerKit

/// `cask-bench queries`: indexed queries of a collection of events (indexes on city, date, each
/// attendee, a unique title) beside the closure scan and two SQL peers on the same events:
/// SQLCipher with SQL indexes on the same fields, and SQLite with RNCryptor rows whose only
/// plain column is the id. Engines take turns round by round; every answer is checked against
/// CipherCask's. Also saves and updates with 0, 1 and 3 indexes, open time, an index entry's
/// memory, and the disk with indexes ÷ without.
enum QueriesCommand: BenchCommand {
  static let name = "queries"
  static let abstract = "Indexed queries beside the closure scan, SQLCipher's SQL indexes and SQLite+RNCryptor rows."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "2,000 events, 5 runs, 2 rounds: every engine and check, for CI; the figures are noisy."),
    ("--events N[,N...]", "Collection sizes (default 100000)."),
    ("--runs N", "Runs of each indexed query per round, CipherCask and SQLCipher (default 50)."),
    ("--rounds N", "Rounds; each starts with the next engine, medians are over rounds (default 3)."),
    ("--peers LIST", "Comma-separated peers (default sqlcipher,sqlite+rncryptor; 'none' for CipherCask alone)."),
    ("--dir DIR", "Where the scratch stores go (default /tmp)."),
    ("--composite", "Also a composite index on (city, date), which the sorted pages of a city then walk."),
    ResultsDestination.option,
  ]

  /// The SQL peers of the comparison.
  static let peers: [PeerEngine] = ["sqlcipher", "sqlite+rncryptor"]

  /// Whether a peer's queries are scans (sealed rows read whole), run `scanRuns` times.
  static func scans(_ peer: PeerEngine) -> Bool {
    peer.name == "sqlite+rncryptor"
  }

  struct Settings {
    var runs: Int
    /// Runs of each scan per round: a scan of the whole collection is slow and steady enough for one.
    var scanRuns = 1
    var rounds: Int
    var peers: [PeerEngine]
    var composite = false
    var seed: UInt64 = 42
  }

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    let sizes = try options.numbers("--events", atLeast: 2_000) ?? [quick ? 2_000 : 100_000]
    let runs = try options.positive("--runs") ?? (quick ? 5 : 50)
    let rounds = try options.positive("--rounds") ?? (quick ? 2 : 3)
    let names = try options.names("--peers", from: peers.map(\.name) + ["none"]) ?? peers.map(\.name)
    let composite = options.flag("--composite")
    let chosen = peers.filter { names.contains($0.name) }
    let settings = Settings(runs: runs, rounds: rounds, peers: chosen, composite: composite)
    try options.measure { results, scratch in
      try PeerProcess.checkBuilt(chosen.map(\.executable))
      for size in sizes {
        let folder = try ScratchDirectory(in: scratch)
        defer { folder.remove() }
        let figures = try compare(events: size, settings: settings, in: folder.path)
        try results.write(figures, size: size, name: composite ? "composite-\(size)" : nil)
      }
    }
  }

  /// Per engine and query, the seconds of one operation in each round.
  struct Figures {
    var cask: [String: [Double]] = [:]
    var scan: [String: [Double]] = [:]
    var peers: [String: [String: [Double]]] = [:]
    var peerFill: [String: Double] = [:]
    var peerSetups: [String: String] = [:]

    /// Adds one round of an engine: each workload's median run over its operations.
    mutating func add(_ report: PeerReport) {
      for workload in report.workloads {
        let perOperation = Statistics.median(workload.seconds) / Double(max(workload.operations, 1))
        switch (report.engine, workload.name) {
        case (_, "fill"): peerFill[report.engine] = perOperation
        case ("ciphercask", _): cask[workload.name, default: []].append(perOperation)
        case ("scan", _): scan[workload.name, default: []].append(perOperation)
        default: peers[report.engine, default: [:]][workload.name, default: []].append(perOperation)
        }
      }
    }
  }

  /// Every engine once a round, each round starting with the next; CipherCask's queries and the
  /// scan in this process, each peer in its own. Every answer is checked against CipherCask's.
  static func compare(events count: Int, settings: Settings, in directory: String) throws -> Results {
    let cask = try CaskQuerySide(events: count, seed: settings.seed, composite: settings.composite, in: directory)
    defer { cask.close() }
    var figures = Figures()
    var answers: [String: [String: String]] = [:]
    let turns = ["ciphercask"] + settings.peers.map(\.name)
    for round in 1...settings.rounds {
      for engine in PeerProcess.rotated(turns, round: round) {
        printToStandardError("queries: round \(round) of \(settings.rounds), \(engine), \(count) events")
        var reports: [PeerReport] = []
        if engine == "ciphercask" {
          reports = try cask.reports(runs: settings.runs, scanRuns: settings.scanRuns)
        } else if let peer = settings.peers.first(where: { $0.name == engine }) {
          let report = try PeerProcess.run(
            peer.executable,
            PeerRequest(
              .queries, engine: peer.name, size: count, runs: scans(peer) ? settings.scanRuns : settings.runs,
              directory: directory, seed: settings.seed))
          figures.peerSetups[peer.name] = report.setup
          reports = [report]
        }
        for report in reports {
          figures.add(report)
          answers[report.engine] = report.answers ?? [:]
        }
      }
    }
    let ours = answers["ciphercask"] ?? [:]
    for (engine, theirs) in answers.sorted(by: { $0.key < $1.key }) {
      for (name, answer) in theirs.sorted(by: { $0.key < $1.key }) where ours[name] != answer {
        throw BenchError("\(name): \(engine)'s answer differs from CipherCask's")
      }
    }
    let costs = try writeCosts(in: directory, seed: settings.seed, rounds: settings.rounds)
    return results(events: count, cask: cask, figures: figures, settings: settings, writeCosts: costs)
  }
}

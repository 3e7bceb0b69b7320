import Foundation
import PeerKit

/// `cask-bench sync`: CipherCaskSync's `CaskSync` against a real Kinto on 127.0.0.1, in plain
/// and end-to-end mode. Each round, in a fresh remote collection: device A pushes the N events
/// it holds (its first sync); device B, empty, pulls them whole (its first sync); A changes a
/// few of them (a tenth deleted) and syncs; B pulls those changes; B syncs once more with
/// nothing changed. Beside each step, plain HTTP with URLSession does the same moves without
/// storing anything (the same records in the same batches and pages): the ratio says what
/// the store, the sync state and the encryption add to the server's own time.
enum SyncCommand: BenchCommand {
  static let name = "sync"
  static let abstract = "CaskSync against Kinto on 127.0.0.1: push, full and incremental pulls, beside plain HTTP."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "300 events, 30 changes, one round."),
    ("--events N", "Events the first push and the full pull move (default 10000)."),
    ("--rounds N", "Rounds, each in fresh collections; figures are medians (default 3)."),
    ("--modes LIST", "plain, end-to-end or both (default plain,end-to-end)."),
    (
      "--postgres",
      "Kinto stores in the PostgreSQL database of $CASK_SYNC_POSTGRES (migrated first) instead of memory."
    ),
    ("--dir DIR", "Where the stores and Kinto's settings and log go (default /tmp)."),
    ResultsDestination.option,
  ]

  /// The end-to-end passphrase of both devices: a benchmark's, not a secret.
  static let passphrase = "cask-bench sync passphrase"

  /// One step of a round: what `CaskSync` or plain HTTP did, and how long it took.
  struct Step: Codable {
    /// A `Phase` raw value.
    let phase: String
    /// Objects the step moved (events pushed or pulled, deletions included).
    let objects: Int
    /// Each round's wall seconds, requests and body bytes (request and response bodies).
    var seconds: [Double] = []
    var requests: [Int] = []
    var bytes: [Int] = []
    /// Each round's bytes on the wire, both ways: request lines, headers and bodies
    /// (`SyncWireCounter`). Absent from results files written before the relay counted them.
    var wireBytes: [Int]?
    /// The last round's requests one by one, for the steps of a few requests.
    var exchanges: [SyncExchange]?

    var medianSeconds: Double { Statistics.median(seconds) }
    var medianRequests: Double { Statistics.median(requests.map(Double.init)) }
    var medianBytes: Double { Statistics.median(bytes.map(Double.init)) }
    var medianWireBytes: Double? { wireBytes.map { Statistics.median($0.map(Double.init)) } }
  }

  /// The steps of a round, in the order they run.
  enum Phase: String, CaseIterable {
    case push = "push"
    case rawPush = "raw-batch-put"
    case fullPull = "full-pull"
    case keyDerivation = "scrypt"
    case rawList = "raw-list"
    case incrementalPush = "incremental-push"
    case incrementalPull = "incremental-pull"
    case rawSince = "raw-list-since"
    case unchanged = "unchanged"
  }

  struct Mode: Codable {
    /// `plain` or `end-to-end`.
    let mode: String
    var steps: [Step]

    func step(_ phase: Phase) -> Step? { steps.first { $0.phase == phase.rawValue } }
  }

  struct Report: Codable {
    let events: Int
    let changes: Int
    let deletions: Int
    let rounds: Int
    /// `memory` or `postgresql`.
    let backend: String
    /// `KintoServer.pageSize` and the server's `batch_max_requests`.
    let pageSize: Int
    let batchLimit: Int
    var modes: [Mode] = []
  }

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    let postgres = options.flag("--postgres")
    let events = try options.number("--events", atLeast: 10) ?? (quick ? 300 : 10_000)
    let rounds = try options.positive("--rounds") ?? (quick ? 1 : 3)
    let modes = try (options.names("--modes", from: ["plain", "end-to-end"]) ?? ["plain", "end-to-end"])
      .reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
    try options.measure { results, scratch in
      // Events changed between the two syncs of the incremental step, a tenth of them deleted.
      let changes = Swift.min(events, quick ? 30 : 100)
      var database: String?
      if postgres {
        guard let url = ProcessInfo.processInfo.environment["CASK_SYNC_POSTGRES"], !url.isEmpty else {
          throw UsageError("'--postgres' needs CASK_SYNC_POSTGRES set to a PostgreSQL URL")
        }
        database = url
      }

      printToStandardError("sync: starting kinto (\(postgres ? "postgresql" : "memory") backend)")
      let server = try KintoLauncher(postgres: database, directory: scratch)
      defer { server.stop() }
      let wire = try SyncWireCounter(server: server.url)
      defer { wire.stop() }
      let workload = SyncWorkload(
        server: wire.url, wire: wire, events: events, changes: changes, directory: scratch,
        runID: String(UInt32.random(in: 0...UInt32.max), radix: 36))
      var report = Report(
        events: events, changes: changes, deletions: workload.deletions, rounds: rounds,
        backend: postgres ? "postgresql" : "memory", pageSize: workload.pageSize, batchLimit: workload.batchLimit)
      for mode in modes {
        var steps: [Step] = []
        for round in 1...rounds {
          printToStandardError("sync: \(mode), round \(round) of \(rounds)")
          let measured = try AsyncBridge.wait { try await workload.round(round, endToEnd: mode == "end-to-end") }
          for (index, step) in measured.enumerated() {
            if index == steps.count { steps.append(Step(phase: step.phase.rawValue, objects: step.objects)) }
            steps[index].seconds.append(step.seconds)
            steps[index].requests.append(step.traffic.requests)
            steps[index].bytes.append(step.traffic.bytes)
            steps[index].wireBytes = (steps[index].wireBytes ?? []) + [step.wire]
            if !step.exchanges.isEmpty { steps[index].exchanges = step.exchanges }
          }
        }
        report.modes.append(Mode(mode: mode, steps: steps))
      }
      server.stop()
      // The backends' files sit side by side: `sync-10000.json` and `sync-10000-postgresql.json`.
      try results.write(report, size: events, name: postgres ? "\(events)-postgresql" : nil)
    }
  }

  /// The fewest requests an incremental sync can make (the issue's bound): one to learn the
  /// collection changed, one for the sync state, a page per `pageSize` changes pulled and a
  /// batch per `batchLimit` changes pushed.
  static func requestBound(pulled: Int, pushed: Int, pageSize: Int, batchLimit: Int) -> Int {
    func pages(_ count: Int, _ size: Int) -> Int { (count + size - 1) / Swift.max(size, 1) }
    return 2 + pages(pulled, pageSize) + pages(pushed, batchLimit)
  }
}

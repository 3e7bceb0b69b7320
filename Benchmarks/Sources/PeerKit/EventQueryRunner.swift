import Foundation

/// Runs `EventQueries` against one engine's `EventStore`: fills it once (a store already filled
/// in the folder is reused, as `cask-bench queries` calls the peer once per round), times each
/// query `runs` times and the saves once, and reports each answer, checked against CipherCask's.
public enum EventQueryRunner {
  public static func run(
    opener: any EventStoreOpener, request: PeerRequest, progress: (String) -> Void
  ) throws -> PeerReport {
    let path = request.directory + "/" + opener.name
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let (store, filled) = try opener.open(directory: path)
    var figures: [WorkloadFigures] = []
    if !filled {
      progress("\(opener.name): filling \(request.size) events")
      let events = BenchEvent.sequence(0..<request.size, seed: request.seed)
      let seconds = try Stopwatch.seconds { try store.fill(events) }
      figures.append(WorkloadFigures(name: "fill", operations: events.count, seconds: [seconds], p50: 0, p99: 0))
    }
    progress("\(opener.name): \(request.runs) runs of each query at \(request.size) events")
    let measured = try queries(store, events: request.size, runs: request.runs, seed: request.seed)
    try store.close()
    var report = PeerReport(
      engine: opener.name, setup: opener.setup, mode: "queries", keys: request.size, durability: .never,
      runs: request.runs, workloads: figures + measured.figures, peakRSSBytes: ProcessFigures.peakRSS())
    report.answers = measured.answers
    return report
  }

  /// Times each query `runs` times on a filled store, then, with `saves`, the saves once (removed
  /// again untimed): the same for every engine, CipherCask's in `cask-bench`'s process.
  public static func queries(
    _ store: any EventStore, events: Int, runs: Int, seed: UInt64, saves: Bool = true
  ) throws -> (figures: [WorkloadFigures], answers: [String: String]) {
    let queries = EventQueries(events: events)
    var figures: [WorkloadFigures] = []
    var answers: [String: String] = [:]
    func time(_ name: String, operations: Int = 1, _ body: () throws -> String) throws {
      var seconds: [Double] = []
      for _ in 0..<Swift.max(1, runs) {
        seconds.append(try Stopwatch.seconds { answers[name] = try body() })
      }
      figures.append(WorkloadFigures(name: name, operations: operations, seconds: seconds, p50: 0, p99: 0))
    }
    try time("equality") {
      let found = try store.equality(city: queries.city, limit: queries.pageSize)
      return found.allSatisfy { $0.city == queries.city } ? String(found.count) : "wrong city"
    }
    try time("range") { Self.idSet(try store.dateRange(queries.dateRange)) }
    try time("contains") { Self.idSet(try store.attended(by: queries.person)) }
    for (name, offset) in [("page0", 0), ("page1000", queries.deepOffset)] {
      try time(name) {
        try store.newest(city: queries.city, offset: offset, limit: queries.pageSize).map(\.id).joined(separator: ",")
      }
    }
    try time("count") { String(try store.count(city: queries.city)) }
    try time("unique", operations: 2) {
      "\(try store.isTaken(title: queries.takenTitle)),\(try store.isTaken(title: queries.freeTitle))"
    }
    guard saves else { return (figures, answers) }
    let saved = queries.savedEvents(seed: seed)
    let saveSeconds = try Stopwatch.seconds { for event in saved { try store.save(event) } }
    figures.append(WorkloadFigures(name: "save", operations: saved.count, seconds: [saveSeconds], p50: 0, p99: 0))
    for event in saved { try store.remove(event) }
    return (figures, answers)
  }

  /// The ids of an unordered answer, sorted, comma-separated.
  public static func idSet(_ events: [BenchEvent]) -> String {
    events.map(\.id).sorted().joined(separator: ",")
  }
}

import Foundation

/// The tables `cask-bench sync` prints and Docs/BENCHMARKS.md shows, and its targets.
extension SyncCommand {
  /// The plain-HTTP step each `CaskSync` step is set beside.
  static let bound: [Phase: Phase] = [.push: .rawPush, .fullPull: .rawList, .incrementalPull: .rawSince]

  static func label(_ phase: Phase, _ report: Report) -> String {
    let events = Number.grouped(report.events)
    let changes = "\(report.changes) changes (\(report.deletions) deletions)"
    switch phase {
    case .push: return "A's first sync: push of \(events) events"
    case .rawPush: return "plain HTTP: the same records, batch PUTs"
    case .fullPull: return "B's first sync: full pull of \(events) events"
    case .keyDerivation: return "of it, once: scrypt of the passphrase"
    case .rawList: return "plain HTTP: GET of every page"
    case .incrementalPush: return "A's sync of \(changes)"
    case .incrementalPull: return "B's sync: incremental pull of \(changes)"
    case .rawSince: return "plain HTTP: GET of the changes since B's cursor"
    case .unchanged: return "B's sync with nothing changed"
    }
  }

  /// One table per mode, a line comparing the incremental pull with the full one, and the
  /// requests of the incremental syncs one by one.
  static func render(_ report: Report) -> String {
    var parts: [String] = []
    for mode in report.modes {
      var table = Table([
        ("\(mode.mode), \(report.backend) backend", .left), ("median s", .right), ("objects/s", .right),
        ("requests", .right), ("KB in bodies", .right), ("KB on the wire", .right), ("÷ plain HTTP (time)", .right),
      ])
      for phase in Phase.allCases {
        guard let step = mode.step(phase) else { continue }
        let seconds = step.medianSeconds
        let ratio = bound[phase].flatMap(mode.step).map {
          Number.fixed(seconds / Swift.max($0.medianSeconds, 1e-9), 2) + "×"
        }
        table.append([
          label(phase, report), Number.fixed(seconds, 3),
          step.objects > 0 ? Number.grouped(Double(step.objects) / Swift.max(seconds, 1e-9)) : "—",
          Number.grouped(step.medianRequests), Number.grouped(step.medianBytes / 1e3),
          step.medianWireBytes.map { Number.grouped($0 / 1e3) } ?? "—", ratio ?? "—",
        ])
      }
      parts.append(table.render())
      if let full = mode.step(.fullPull), let incremental = mode.step(.incrementalPull) {
        let time = incremental.medianSeconds / Swift.max(full.medianSeconds, 1e-9)
        let bytes = incremental.medianBytes / Swift.max(full.medianBytes, 1)
        parts.append(
          "The incremental pull takes \(Number.fixed(time * 100, 1))% of the full pull's time and "
            + "\(Number.fixed(bytes * 100, 1))% of its bytes, in \(Number.grouped(incremental.medianRequests)) "
            + "requests against \(Number.grouped(full.medianRequests)).")
      }
      parts.append(contentsOf: breakdown(mode, report))
    }
    let rounds = report.rounds == 1 ? "one round" : "medians of \(report.rounds) rounds"
    parts.append(
      "Pages of \(report.pageSize) records, batches of \(report.batchLimit) requests; \(rounds), each in fresh "
        + "collections; every step's counts checked.")
    return parts.joined(separator: "\n\n")
  }

  /// The incremental syncs' requests one by one, as the relay counted them on the wire, and
  /// what the push's batches cost per change beside the changes' own listing.
  static func breakdown(_ mode: Mode, _ report: Report) -> [String] {
    var parts: [String] = []
    for phase in [Phase.incrementalPush, .incrementalPull] {
      guard let exchanges = mode.step(phase)?.exchanges, !exchanges.isEmpty else { continue }
      var table = Table([
        ("\(label(phase, report)), \(mode.mode): request", .left), ("query", .left), ("status", .right),
        ("sent head B", .right), ("sent body B", .right), ("answer head B", .right), ("answer body B", .right),
        ("total B", .right),
      ])
      for exchange in exchanges {
        table.append([
          shortened(exchange.request), exchange.query.isEmpty ? "—" : exchange.query, "\(exchange.status)",
          Number.grouped(exchange.requestHead), Number.grouped(exchange.requestBody),
          Number.grouped(exchange.responseHead), Number.grouped(exchange.responseBody),
          Number.grouped(exchange.total),
        ])
      }
      func sum(_ value: (SyncExchange) -> Int) -> Double { Double(exchanges.map(value).reduce(0, +)) }
      table.append([
        "all \(exchanges.count) requests", "", "", Number.grouped(sum(\.requestHead)),
        Number.grouped(sum(\.requestBody)), Number.grouped(sum(\.responseHead)),
        Number.grouped(sum(\.responseBody)), Number.grouped(sum(\.total)),
      ])
      parts.append(table.render())
    }
    let batches = mode.step(.incrementalPush)?.exchanges?.filter { $0.request.hasSuffix("/batch") } ?? []
    if !batches.isEmpty, let listed = mode.step(.rawSince), report.changes > 0 {
      let changes = Double(report.changes)
      let sent = Double(batches.map { $0.requestHead + $0.requestBody }.reduce(0, +)) / changes
      let answered = Double(batches.map { $0.responseHead + $0.responseBody }.reduce(0, +)) / changes
      let record = listed.medianBytes / changes
      parts.append(
        "Per change, the batches sent \(Number.grouped(sent)) B and were answered \(Number.grouped(answered)) B; "
          + "the changes' listing holds \(Number.grouped(record)) B per change, so the batches alone are "
          + "\(Number.fixed((sent + answered) / Swift.max(record, 1), 2))× it.")
    }
    return parts
  }

  /// A request's path without the bucket and collection (`PATCH …/records`, `POST /v1/batch`).
  static func shortened(_ request: String) -> String {
    guard let range = request.range(of: "/records") else { return request }
    let method = request.split(separator: " ").first.map(String.init) ?? ""
    return method + " …" + request[range.lowerBound...]
  }

  /// The incremental sync's bounds: at most 2 + ⌈changes ÷ page⌉ + ⌈pushes ÷ batch limit⌉
  /// requests, and at most twice the bytes of the changes listed by plain HTTP (the sync's
  /// bytes on the wire, headers included, over the listing's body).
  static func targets(_ report: Report) -> [Target] {
    let at = "\(Number.grouped(report.events)) events"
    var targets: [Target] = []
    let changes = "\(report.changes) changes"
    let syncs = [(Phase.incrementalPush, "push", 0, report.changes), (.incrementalPull, "pull", report.changes, 0)]
    for mode in report.modes {
      // One row per mode and backend: the targets table keeps one row per name.
      let name = "sync (\(mode.mode), \(report.backend))"
      for (phase, verb, pulled, pushed) in syncs {
        guard let step = mode.step(phase) else { continue }
        let bound = requestBound(
          pulled: pulled, pushed: pushed, pageSize: report.pageSize, batchLimit: report.batchLimit)
        targets.append(
          Target(
            "\(name): \(verb) of \(changes), requests", at: at, required: Double(bound), atMost: true,
            measured: step.medianRequests))
        guard let listed = mode.step(.rawSince) else { continue }
        // Every byte the sync put on the wire, headers too (bodies alone in older files),
        // over the changed records' bytes: the body of their listing.
        targets.append(
          Target(
            "\(name): \(verb) of \(changes), bytes ÷ their listing", at: at, required: 2, atMost: true,
            measured: (step.medianWireBytes ?? step.medianBytes) / Swift.max(listed.medianBytes, 1)))
      }
    }
    return targets
  }
}

import CipherCask
import Foundation
import PeerKit

extension QueriesCommand {
  /// The index sets whose saves `writeCosts` compares, and `profile event-save` runs alone:
  /// a short name (`--indexes`), the table's label, the indexes.
  static let writeIndexSets: [(name: String, label: String, indexes: [CaskIndex<BenchEvent>])] = [
    ("none", "0 indexes", []),
    ("1", "1 index (city)", [.index("city", \.city)]),
    (
      "3", "3 indexes (city, date, country)",
      [.index("city", \.city), .index("date", \.date), .index("country", \.country)]
    ),
    (
      "each", "3 indexes (city, date, attendee each: 3 per event)",
      [.index("city", \.city), .index("date", \.date), .index("attendee", each: \.attendees)]
    ),
  ]

  /// The saves and updates of one index set: seconds of one write, each the median over rounds.
  struct WriteCost: Codable {
    let name: String
    let label: String
    let saveSeconds: Double
    let updateSeconds: Double
    /// CPU seconds of the saving thread: on a machine busy with other work the wall time counts
    /// the waits for a core, and its ratios moved by 2-4x between runs.
    let saveCPUSeconds: Double
    let updateCPUSeconds: Double
  }

  /// Saves (new events) and updates (a new city and date) of 2,000 events, each in its own
  /// commit, into a fresh store of 10,000 events per index set; the sets take turns round by
  /// round, each round starting with the next, so that a burst of load lands on all of them.
  static func writeCosts(in base: String, seed: UInt64, rounds: Int) throws -> [WriteCost] {
    let all = BenchEvent.sequence(0..<12_000, seed: seed)
    let base10k = Array(all[0..<10_000])
    let fresh = Array(all[10_000..<12_000])
    var runs: [String: [[Double]]] = [:]
    for round in 1...rounds {
      for set in PeerProcess.rotated(writeIndexSets, round: round) {
        printToStandardError("queries: write costs, round \(round) of \(rounds), \(set.label)")
        let scratch = try ScratchDirectory(in: base)
        defer { scratch.remove() }
        let store = try CaskStore(
          path: "\(scratch.path)/w.cask", password: "bench", options: .init(durability: .never, autoCompaction: nil))
        defer { try? store.close() }
        let events = store.collection(BenchEvent.self, named: "events", indexes: set.indexes)
        try events.save(contentsOf: base10k)
        _ = try events.query().where(\.city, equals: BenchEvent.cities[0]).count()
        let saveCPUStart = CPUTime.thread()
        let save = try Stopwatch.seconds { for event in fresh { try events.save(event) } } / Double(fresh.count)
        let updateCPUStart = CPUTime.thread()
        let saveCPU = (updateCPUStart - saveCPUStart) / Double(fresh.count)
        let update =
          try Stopwatch.seconds {
            for (index, var event) in fresh.enumerated() {
              event.city = BenchEvent.cities[index % BenchEvent.cities.count]
              event.date = event.date.addingTimeInterval(60)
              try events.save(event)
            }
          } / Double(fresh.count)
        let updateCPU = (CPUTime.thread() - updateCPUStart) / Double(fresh.count)
        runs[set.name, default: []].append([save, update, saveCPU, updateCPU])
      }
    }
    return writeIndexSets.map { set in
      let measured = runs[set.name] ?? []
      func median(_ column: Int) -> Double { Statistics.median(measured.map { $0[column] }) }
      return WriteCost(
        name: set.name, label: set.label, saveSeconds: median(0), updateSeconds: median(1),
        saveCPUSeconds: median(2), updateCPUSeconds: median(3))
    }
  }

  /// The write costs as a table, each save's ratios to the save without indexes.
  static func writeCostsTable(_ costs: [WriteCost]) -> String {
    var table = Table([
      ("writes into 10,000 events (.never)", .left), ("save µs", .right), ("update µs", .right),
      ("save / 0 indexes", .right), ("save CPU µs", .right), ("update CPU µs", .right),
      ("save CPU / 0 indexes", .right),
    ])
    let baseline = costs.first { $0.name == "none" }
    for cost in costs {
      table.append([
        cost.label, Number.microseconds(cost.saveSeconds), Number.microseconds(cost.updateSeconds),
        baseline.map { Number.fixed(cost.saveSeconds / Swift.max($0.saveSeconds, 1e-12), 2) } ?? "—",
        Number.microseconds(cost.saveCPUSeconds), Number.microseconds(cost.updateCPUSeconds),
        baseline.map { Number.fixed(cost.saveCPUSeconds / Swift.max($0.saveCPUSeconds, 1e-12), 2) } ?? "—",
      ])
    }
    return table.render()
  }

  /// The save CPU of index set `name` ÷ that of the save without indexes, if both were measured.
  static func saveCPURatio(_ costs: [WriteCost], _ name: String) -> Double? {
    guard let set = costs.first(where: { $0.name == name }), let none = costs.first(where: { $0.name == "none" })
    else { return nil }
    return set.saveCPUSeconds / Swift.max(none.saveCPUSeconds, 1e-12)
  }
}

import CipherCask
import Foundation
import PeerKit

extension QueriesCommand {
  /// Saves and updates with 0, 1 and 3 indexes, each into a fresh store of 10,000 events.
  static func writeCosts(in base: String, seed: UInt64) throws -> String {
    let all = BenchEvent.sequence(0..<12_000, seed: seed)
    let base10k = Array(all[0..<10_000])
    let fresh = Array(all[10_000..<12_000])
    let indexSets: [(String, [CaskIndex<BenchEvent>])] = [
      ("0 indexes", []),
      ("1 index (city)", [.index("city", \.city)]),
      (
        "3 indexes (city, date, country)",
        [.index("city", \.city), .index("date", \.date), .index("country", \.country)]
      ),
      (
        "3 indexes (city, date, attendee each: 3 per event)",
        [.index("city", \.city), .index("date", \.date), .index("attendee", each: \.attendees)]
      ),
    ]
    // CPU time of the saving thread beside the wall time: on a machine busy with other work the
    // wall time counts the waits for a core, and the ratios moved by 2-4x between runs.
    var table = Table([
      ("writes into 10,000 events (.never)", .left), ("save µs", .right), ("update µs", .right),
      ("save / 0 indexes", .right), ("save CPU µs", .right), ("update CPU µs", .right),
      ("save CPU / 0 indexes", .right),
    ])
    var baseline = 0.0
    var baselineCPU = 0.0
    for (label, indexes) in indexSets {
      let scratch = try ScratchDirectory(in: base)
      defer { scratch.remove() }
      let store = try CaskStore(
        path: "\(scratch.path)/w.cask", password: "bench", options: .init(durability: .never, autoCompaction: nil))
      defer { try? store.close() }
      let events = store.collection(BenchEvent.self, named: "events", indexes: indexes)
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
      if indexes.isEmpty {
        baseline = save
        baselineCPU = saveCPU
      }
      table.append([
        label, Number.microseconds(save), Number.microseconds(update), Number.fixed(save / baseline, 2),
        Number.microseconds(saveCPU), Number.microseconds(updateCPU), Number.fixed(saveCPU / baselineCPU, 2),
      ])
    }
    return table.render()
  }
}

import CipherCask
import Foundation
import PeerKit

/// CipherCask's side of `cask-bench queries`: one store of events with the same indexes as the
/// SQL peer's (city, date, each attendee, a unique title), asked through `CaskEventStore`
/// (`CaskQuery`) and, for the same answers, `CaskScanStore` (the closure scan), in this
/// process; and what building and opening the store cost.
final class CaskQuerySide {
  typealias Event = BenchEvent

  static let indexes: [CaskIndex<Event>] = [
    .index("city", \.city), .index("date", \.date), .index("attendee", each: \.attendees), .unique("title", \.title),
  ]
  /// With `--composite`: also (city, date), which answers a city's page by date in one walk.
  static let compositeIndexes = indexes + [.index("cityDate", \.city, \.date)]

  /// The indexes of this run's indexed store.
  let indexes: [CaskIndex<Event>]

  let store: CaskStore
  let events: CaskCollection<Event>
  let queries: EventQueries
  let seed: UInt64
  /// What building the stores cost and left behind, for the notes under the table.
  var fillSeconds = 0.0
  var openSeconds = 0.0
  var firstQuerySeconds = 0.0
  var heapPerEventAfterOpen = 0.0
  var heapPerEntry = 0.0
  var diskPerEntry = 0.0
  var diskIndexed = 0
  var diskPlain = 0
  var entriesPerEvent = 0.0

  /// Writes `count` events into an indexed and a plain store (for the disk figures), closes
  /// both, and opens the indexed one again, so that the queries run on a store as an app
  /// finds it at launch.
  init(events count: Int, seed: UInt64, composite: Bool = false, in directory: String) throws {
    self.seed = seed
    let indexes = composite ? Self.compositeIndexes : Self.indexes
    self.indexes = indexes
    queries = EventQueries(events: count)
    let objects = BenchEvent.sequence(0..<count, seed: seed)
    let entries = objects.reduce(0) { $0 + indexes.count - 1 + Set($1.attendees).count }
    entriesPerEvent = Double(entries) / Double(count)
    let options = CaskStore.Options(durability: .never, autoCompaction: nil)
    let indexedPath = "\(directory)/indexed.cask"
    let plainPath = "\(directory)/plain.cask"
    printToStandardError("queries: writing \(count) events into an indexed and a plain CipherCask store")
    for (path, indexed) in [(indexedPath, true), (plainPath, false)] {
      let store = try CaskStore(path: path, password: "bench", options: options)
      let collection =
        indexed
        ? store.collection(Event.self, named: "events", indexes: indexes)
        : store.collection(Event.self, named: "events")
      let seconds = try Stopwatch.seconds { try CaskEventStore(collection).fill(objects) }
      if indexed { fillSeconds = seconds }
      try store.close()
    }
    diskIndexed = ProcessFigures.fileBytes(indexedPath)
    diskPlain = ProcessFigures.fileBytes(plainPath)
    diskPerEntry = Double(diskIndexed - diskPlain) / Double(entries)

    ProcessMemory.releaseFreeMemory()
    let heapBeforeOpen = ProcessMemory.heapBytesInUse()
    (store, openSeconds) = try Stopwatch.timed { try CaskStore(path: indexedPath, password: "bench", options: options) }
    let heapAfterOpen = ProcessMemory.heapBytesInUse()
    heapPerEventAfterOpen = Double(heapAfterOpen - heapBeforeOpen) / Double(count)
    events = store.collection(Event.self, named: "events", indexes: indexes)
    let queries = queries
    firstQuerySeconds = try Stopwatch.seconds {
      _ = try events.query().where(\.city, equals: queries.city).count()
      _ = try events.query().sorted(by: \.date).limit(1).ids()
      _ = try events.query().where(\.attendees, contains: queries.person).count()
      _ = try events.query().where(\.title, equals: queries.takenTitle).count()
    }
    heapPerEntry = Double(ProcessMemory.heapBytesInUse() - heapAfterOpen) / Double(entries)
  }

  func close() {
    try? store.close()
  }

  /// CipherCask's queries and the closure scan's, each timed as the peers time theirs
  /// (`EventQueryRunner.queries`).
  ///
  /// - Returns: a report named `ciphercask`, and one named `scan`.
  func reports(runs: Int, scanRuns: Int) throws -> [PeerReport] {
    let indexed = CaskEventStore(events)
    let stores: [(name: String, store: any EventStore, runs: Int)] = [
      ("ciphercask", indexed, runs), ("scan", CaskScanStore(indexed), scanRuns),
    ]
    return try stores.map { name, store, runs in
      let measured = try EventQueryRunner.queries(
        store, events: queries.events, runs: runs, seed: seed, saves: name == "ciphercask")
      var report = PeerReport(
        engine: name, setup: "", mode: "queries", keys: queries.events, durability: .never, runs: runs,
        workloads: measured.figures)
      report.answers = measured.answers
      return report
    }
  }

  func explain(_ name: String) -> String {
    guard let query = CaskEventStore(events).query(name, queries) else {
      return name == "save" ? "\(indexes.count) indexes kept in the save's commit" : ""
    }
    return (try? query.explain()) ?? "?"
  }
}

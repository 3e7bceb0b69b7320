import CipherCask
import Foundation
import PeerKit

/// CipherCask's side of `cask-bench queries`: one store of events with the same indexes as the
/// SQL peer's (city, date, each attendee, a unique title), queried through `CaskQuery` and,
/// for the same answers, through the closure scan (`fetch(where:sortedBy:limit:offset:)`,
/// `filter`), in this process.
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
      let seconds = try Stopwatch.seconds {
        var start = 0
        while start < count {
          try collection.save(contentsOf: objects[start..<min(count, start + 2_000)])
          start += 2_000
        }
      }
      if indexed { fillSeconds = seconds }
      try store.close()
    }
    diskIndexed = QueriesCommand.directoryBytes(indexedPath)
    diskPlain = QueriesCommand.directoryBytes(plainPath)
    diskPerEntry = Double(diskIndexed - diskPlain) / Double(entries)

    ProcessMemory.releaseFreeMemory()
    let heapBeforeOpen = ProcessMemory.heapBytesInUse()
    var opened: CaskStore?
    openSeconds = try Stopwatch.seconds {
      opened = try CaskStore(path: indexedPath, password: "bench", options: options)
    }
    guard let opened else { throw BenchError("no store") }
    store = opened
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

  /// One indexed query and the closure scan that answers the same, each returning the answer
  /// as the peers report it.
  struct Query {
    let name: String
    let plan: CaskQuery<Event>?
    let indexed: () throws -> String
    let scan: (() throws -> String)?
  }

  var catalogue: [Query] {
    let events = events
    let queries = queries
    let city = queries.city
    func checkedCount(_ found: [Event]) -> String {
      found.allSatisfy { $0.city == city } ? String(found.count) : "wrong city"
    }
    let equality = events.query().where(\.city, equals: city).limit(queries.pageSize)
    let range = events.query().where(\.date, in: queries.dateRange)
    let contains = events.query().where(\.attendees, contains: queries.person)
    func page(_ offset: Int) -> CaskQuery<Event> {
      events.query().where(\.city, equals: city).sorted(by: \.date, ascending: false).offset(offset)
        .limit(queries.pageSize)
    }
    let counting = events.query().where(\.city, equals: city)
    func taken(_ title: String) -> CaskQuery<Event> { events.query().where(\.title, equals: title) }
    var list: [Query] = [
      Query(
        name: "equality", plan: equality, indexed: { checkedCount(try equality.fetch()) },
        scan: { checkedCount(try events.fetch(where: { $0.city == city }, limit: queries.pageSize)) }),
      Query(
        name: "range", plan: range, indexed: { EventQueryRunner.idSet(try range.fetch()) },
        scan: { EventQueryRunner.idSet(try events.filter { queries.dateRange.contains($0.date) }) }),
      Query(
        name: "contains", plan: contains, indexed: { EventQueryRunner.idSet(try contains.fetch()) },
        scan: { EventQueryRunner.idSet(try events.filter { $0.attendees.contains(queries.person) }) }),
    ]
    for (name, offset) in [("page0", 0), ("page1000", queries.deepOffset)] {
      let query = page(offset)
      list.append(
        Query(
          name: name, plan: query, indexed: { try query.fetch().map(\.id).joined(separator: ",") },
          scan: {
            try events.fetch(
              where: { $0.city == city }, sortedBy: { ($0.date, $0.id) > ($1.date, $1.id) }, limit: queries.pageSize,
              offset: offset
            ).map(\.id).joined(separator: ",")
          }))
    }
    list.append(
      Query(
        name: "count", plan: counting, indexed: { String(try counting.count()) },
        scan: { String(try events.filter { $0.city == city }.count) }))
    let takenQuery = taken(queries.takenTitle)
    let freeQuery = taken(queries.freeTitle)
    list.append(
      Query(
        name: "unique", plan: takenQuery, indexed: { "\(try takenQuery.count() > 0),\(try freeQuery.count() > 0)" },
        scan: {
          let taken = try events.fetch(where: { $0.title == queries.takenTitle }, limit: 1)
          let free = try events.fetch(where: { $0.title == queries.freeTitle }, limit: 1)
          return "\(!taken.isEmpty),\(!free.isEmpty)"
        }))
    return list
  }

  /// One round: each indexed query `runs` times and each scan `scanRuns` times (none when 0),
  /// then the saves. Every answer is checked against the scan's (or, without scans, returned
  /// for the check against the peers').
  ///
  /// - Returns: per query, the median seconds of one operation, indexed and scanned, and the
  ///   indexed answer.
  func round(runs: Int, scanRuns: Int) throws -> [String: (indexed: Double, scan: Double?, answer: String)] {
    var figures: [String: (indexed: Double, scan: Double?, answer: String)] = [:]
    for query in catalogue {
      let answer = try query.indexed()
      var scanSeconds: Double?
      if scanRuns > 0, let scan = query.scan {
        guard try scan() == answer else {
          throw BenchError("\(query.name): the index's answer differs from the scan's")
        }
        scanSeconds = try QueriesCommand.median(scanRuns) { _ = try scan() }
      }
      let operations = query.name == "unique" ? 2.0 : 1.0
      let indexed = try QueriesCommand.median(runs) { _ = try query.indexed() } / operations
      figures[query.name] = (indexed, scanSeconds.map { $0 / operations }, answer)
    }
    let saved = queries.savedEvents(seed: seed)
    let saveSeconds = try Stopwatch.seconds { for event in saved { try events.save(event) } }
    for event in saved { _ = try events.delete(id: event.id) }
    figures["save"] = (saveSeconds / Double(saved.count), nil, "")
    return figures
  }

  func explain(_ name: String) -> String {
    guard let query = catalogue.first(where: { $0.name == name }), let plan = query.plan else {
      return name == "save" ? "\(indexes.count) indexes kept in the save's commit" : ""
    }
    return (try? plan.explain()) ?? "?"
  }
}

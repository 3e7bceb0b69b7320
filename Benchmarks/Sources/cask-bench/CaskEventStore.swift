import CipherCask
import Foundation
import PeerKit

/// CipherCask's collection of events as the `queries` comparison asks every engine, through
/// `EventStore`: each query a `CaskQuery` on the collection's indexes. Timed by the peers' own
/// `EventQueryRunner.queries`, in `cask-bench`'s process; the store is `CaskQuerySide`'s.
final class CaskEventStore: EventStore {
  let events: CaskCollection<BenchEvent>

  init(_ events: CaskCollection<BenchEvent>) {
    self.events = events
  }

  /// The query a workload of `EventQueries` runs, for its plan (`explain`); `nil` for saves.
  func query(_ name: String, _ queries: EventQueries) -> CaskQuery<BenchEvent>? {
    switch name {
    case "equality": inCity(queries.city).limit(queries.pageSize)
    case "range": events.query().where(\.date, in: queries.dateRange)
    case "contains": events.query().where(\.attendees, contains: queries.person)
    case "page0": page(queries.city, offset: 0, limit: queries.pageSize)
    case "page1000": page(queries.city, offset: queries.deepOffset, limit: queries.pageSize)
    case "count": inCity(queries.city)
    case "unique": titled(queries.takenTitle)
    default: nil
    }
  }

  private func inCity(_ city: String) -> CaskQuery<BenchEvent> {
    events.query().where(\.city, equals: city)
  }

  private func page(_ city: String, offset: Int, limit: Int) -> CaskQuery<BenchEvent> {
    inCity(city).sorted(by: \.date, ascending: false).offset(offset).limit(limit)
  }

  private func titled(_ title: String) -> CaskQuery<BenchEvent> {
    events.query().where(\.title, equals: title)
  }

  func fill(_ events: [BenchEvent]) throws {
    for start in stride(from: 0, to: events.count, by: 2_000) {
      try self.events.save(contentsOf: events[start..<min(events.count, start + 2_000)])
    }
  }

  func equality(city: String, limit: Int) throws -> [BenchEvent] { try inCity(city).limit(limit).fetch() }
  func dateRange(_ range: Range<Date>) throws -> [BenchEvent] { try events.query().where(\.date, in: range).fetch() }
  func attended(by person: String) throws -> [BenchEvent] {
    try events.query().where(\.attendees, contains: person).fetch()
  }
  func newest(city: String, offset: Int, limit: Int) throws -> [BenchEvent] {
    try page(city, offset: offset, limit: limit).fetch()
  }
  func count(city: String) throws -> Int { try inCity(city).count() }
  func isTaken(title: String) throws -> Bool { try titled(title).count() > 0 }
  func save(_ event: BenchEvent) throws { try events.save(event) }
  func remove(_ event: BenchEvent) throws { _ = try events.delete(id: event.id) }
  /// The store belongs to `CaskQuerySide`, which closes it.
  func close() throws {}
}

/// The same collection asked through the closure scan (`fetch(where:sortedBy:limit:offset:)`,
/// `filter`), which reads and decrypts every object: what the indexes spare a query.
final class CaskScanStore: EventStore {
  let indexed: CaskEventStore

  init(_ indexed: CaskEventStore) {
    self.indexed = indexed
  }

  var events: CaskCollection<BenchEvent> { indexed.events }

  func fill(_ events: [BenchEvent]) throws { try indexed.fill(events) }
  func equality(city: String, limit: Int) throws -> [BenchEvent] {
    try events.fetch(where: { $0.city == city }, limit: limit)
  }
  func dateRange(_ range: Range<Date>) throws -> [BenchEvent] { try events.filter { range.contains($0.date) } }
  func attended(by person: String) throws -> [BenchEvent] { try events.filter { $0.attendees.contains(person) } }
  func newest(city: String, offset: Int, limit: Int) throws -> [BenchEvent] {
    try events.fetch(
      where: { $0.city == city }, sortedBy: { ($0.date, $0.id) > ($1.date, $1.id) }, limit: limit, offset: offset)
  }
  func count(city: String) throws -> Int { try events.filter { $0.city == city }.count }
  func isTaken(title: String) throws -> Bool { try !events.fetch(where: { $0.title == title }, limit: 1).isEmpty }
  func save(_ event: BenchEvent) throws { try indexed.save(event) }
  func remove(_ event: BenchEvent) throws { try indexed.remove(event) }
  func close() throws {}
}

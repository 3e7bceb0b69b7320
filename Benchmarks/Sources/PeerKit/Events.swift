import Foundation

/// The `queries` workload's model: an event as a listings app keeps it (title, date, venue,
/// city, country, attendees, two URLs). 20 cities, so a city holds 5% of the events; 0 to 6
/// attendees drawn from 5,000 people; every title distinct (the unique index's field).
public struct BenchEvent: Codable, Identifiable, Sendable, Equatable {
  public var id: String
  public var title: String
  public var date: Date
  public var venue: String
  public var city: String
  public var country: String
  public var attendees: [String]
  public var fbUrl: URL?
  public var ticketUrl: URL?

  public static let cities = (0..<20).map { "City \($0)" }
  /// The dates lie in this many seconds from `firstDate` (about six years).
  public static let dateSpan = 200_000_000
  public static let firstDate = 700_000_000

  /// The `index`th event of a seeded sequence: every engine of a comparison stores the same.
  public static func make(_ index: Int, using generator: inout SeededGenerator) -> BenchEvent {
    let city = cities[Int.random(in: 0..<cities.count, using: &generator)]
    let seconds = firstDate + Int.random(in: 0...dateSpan, using: &generator)
    let attendees = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
      "p\(Int.random(in: 0..<5_000, using: &generator))"
    }
    return BenchEvent(
      id: String(format: "e%07d", index), title: title(index),
      date: Date(timeIntervalSinceReferenceDate: Double(seconds)), venue: "Hall \(index % 97)", city: city,
      country: "Country \(index % 7)", attendees: attendees,
      fbUrl: URL(string: "https://example.com/fb/\(index)"), ticketUrl: URL(string: "https://example.com/t/\(index)"))
  }

  public static func title(_ index: Int) -> String {
    "Event number \(index) of the season"
  }

  /// The events `range` of the sequence seeded with `seed`.
  public static func sequence(_ range: Range<Int>, seed: UInt64) -> [BenchEvent] {
    var generator = SeededGenerator(seed: seed)
    var events: [BenchEvent] = []
    events.reserveCapacity(range.count)
    for index in 0..<range.upperBound {
      let event = make(index, using: &generator)
      if index >= range.lowerBound { events.append(event) }
    }
    return events
  }
}

/// What every engine of the `queries` comparison is asked, fixed by the store's size so that
/// the answers can be compared across processes.
public struct EventQueries: Sendable {
  public let events: Int
  public let city = BenchEvent.cities[3]
  public let person = "p17"
  public let pageSize = 20
  public let deepOffset = 1_000
  /// Saves timed on a filled store (each its own transaction), removed again untimed.
  public let saves = 200

  public init(events: Int) {
    self.events = events
  }

  /// A window of dates holding about 20 events at any size.
  public var dateRange: Range<Date> {
    let width = Double(BenchEvent.dateSpan) * 20 / Double(max(events, 1))
    let start = Double(BenchEvent.firstDate + BenchEvent.dateSpan / 2)
    return Date(timeIntervalSinceReferenceDate: start)..<Date(timeIntervalSinceReferenceDate: start + width)
  }

  /// A title that is taken (an event in the middle of the store) and one that is free.
  public var takenTitle: String { BenchEvent.title(events / 2) }
  public var freeTitle: String { BenchEvent.title(events * 3) }

  /// The events the save workload adds: new ids and titles, after the store's own.
  public func savedEvents(seed: UInt64) -> [BenchEvent] {
    var generator = SeededGenerator(seed: seed &+ 0x5A7E)
    return (0..<saves).map { BenchEvent.make(events * 2 + $0, using: &generator) }
  }

  /// The rows of the comparison, in order, with what each query is.
  public static let workloads: [(name: String, label: String)] = [
    ("equality", "equality, 20 objects"),
    ("range", "date range, about 20 objects"),
    ("contains", "attendee contains, all matches"),
    ("page0", "20 newest in a city, offset 0"),
    ("page1000", "20 newest in a city, offset 1000"),
    ("count", "count() of a city"),
    ("unique", "unique check (a taken and a free title)"),
    ("save", "save, one per transaction"),
  ]
}

/// One engine's answers to `EventQueries`. `fill` writes transactions of at most 2,000;
/// `equality` any `limit` events of the city; `newest` newest first (ties: larger id first);
/// `save` one transaction that keeps every index, `remove` undoes it.
public protocol EventStore: AnyObject {
  func fill(_ events: [BenchEvent]) throws
  func equality(city: String, limit: Int) throws -> [BenchEvent]
  func dateRange(_ range: Range<Date>) throws -> [BenchEvent]
  func attended(by person: String) throws -> [BenchEvent]
  func newest(city: String, offset: Int, limit: Int) throws -> [BenchEvent]
  func count(city: String) throws -> Int
  func isTaken(title: String) throws -> Bool
  func save(_ event: BenchEvent) throws
  func remove(_ event: BenchEvent) throws
  func close() throws
}

/// Opens one engine's event store in `directory`, and says whether it was filled there before.
public protocol EventStoreOpener: PeerOpener {
  func open(directory: String) throws -> (store: any EventStore, filled: Bool)
}

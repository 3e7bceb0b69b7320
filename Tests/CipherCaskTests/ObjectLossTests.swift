import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Single-object calls (`save`, `get`, `delete`, `contains`, `count`, `ids`) must never lose an
/// object, invent one, or write when there is nothing to write; for String, Int and UUID ids.
@Suite("Single objects are neither lost nor invented")
struct ObjectLossTests {
  @Test("save inserts, a second save of the same id replaces, and get returns what was saved")
  func saveInsertsThenReplaces() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      var event = sampleEvents()[0]
      try events.save(event)
      #expect(try events.get(id: event.id) == event)
      #expect(events.count == 1)
      event.venue = "Main Hall"
      event.attendees.append("bob")
      event.fbUrl = nil
      try events.save(event)
      #expect(try events.get(id: event.id) == event)
      #expect(events.count == 1)
      #expect(store.count == 1)
    }
  }

  @Test("get, contains and delete of a missing id answer nil/false and write nothing")
  func missingIdWritesNothing() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(sampleEvents()[0])
      let before = store.stats()
      let log = CommitLog(store)
      #expect(try events.get(id: "nope") == nil)
      #expect(try events.contains(id: "nope") == false)
      #expect(try events.delete(id: "nope") == false)
      #expect(log.commits.isEmpty)
      #expect(store.stats() == before)
      #expect(events.count == 1)
    }
  }

  @Test("delete reports whether the object existed, and the object is gone afterwards")
  func deleteRemovesOnce() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      #expect(try events.delete(id: "a2"))
      #expect(try events.delete(id: "a2") == false)
      #expect(try events.get(id: "a2") == nil)
      #expect(try events.contains(id: "a2") == false)
      #expect(try events.contains(id: "a1"))
      #expect(events.count == 3)
      #expect(try events.ids() == ["a1", "a3", "a4"])
    }
  }

  @Test("ids() lists every id once, in key order, and count agrees")
  func idsListEveryIdOnce() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      #expect(try events.ids().isEmpty)
      #expect(events.count == 0)
      try events.save(contentsOf: sampleEvents().reversed())
      #expect(try events.ids() == ["a1", "a2", "a3", "a4"])
      #expect(events.count == 4)
    }
  }

  @Test("Int ids round-trip, including negative and extreme values, and list in numeric order")
  func intIdsRoundTrip() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      let values = [0, 1, 2, 10, -5, Int.max, Int.min]
      try counters.save(contentsOf: values.map { Counter(id: $0, value: $0 &* 3) })
      for id in values { #expect(try counters.get(id: id) == Counter(id: id, value: id &* 3)) }
      #expect(try counters.contains(id: 3) == false)
      let ids = try counters.ids()
      #expect(Set(ids) == Set(values))
      #expect(ids.count == values.count)
      #expect(ids == values.sorted())
      #expect(try counters.delete(id: Int.min))
      #expect(counters.count == values.count - 1)
    }
  }

  @Test("UUID ids round-trip through keys, ids() and lookups")
  func uuidIdsRoundTrip() throws {
    try withStore { store throws in
      let tags = store.collection(Tag.self)
      let saved = (0..<5).map { Tag(id: UUID(), name: "tag \($0)") }
      try tags.save(contentsOf: saved)
      for tag in saved { #expect(try tags.get(id: tag.id) == tag) }
      #expect(Set(try tags.ids()) == Set(saved.map(\.id)))
      #expect(try tags.contains(id: UUID()) == false)
      #expect(try tags.delete(id: saved[0].id))
      #expect(tags.count == 4)
      let named = store.collection(Tag.self, named: "labels")
      try named.save(saved[1])
      #expect(try named.ids() == [saved[1].id])
      #expect(tags.count == 4)
    }
  }

  @Test("the default name is the type's name, and a collection named so sees the same objects")
  func defaultNameIsTypeName() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      #expect(events.name == "Event")
      try events.save(sampleEvents()[0])
      let same = store.collection(Event.self, named: "Event")
      #expect(try same.get(id: "a1") == sampleEvents()[0])
      #expect(store.groups() == [.init(group: "Event", count: 1)])
    }
  }

  @Test("a collection with the property-list coder round-trips objects, dates exactly")
  func propertyListCoderRoundTrips() throws {
    try withStore { store throws in
      let events = store.collection(Event.self, named: "plist", coder: PropertyListCaskCoder())
      var event = sampleEvents()[0]
      event.date = Date(timeIntervalSinceReferenceDate: 812_345_678.123_456)
      try events.save(event)
      #expect(try events.get(id: event.id) == event)
    }
  }

  @Test("the default JSON coder keeps dates to the sub-second")
  func jsonCoderKeepsSubSecondDates() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      var event = sampleEvents()[0]
      for date in [
        Date(timeIntervalSinceReferenceDate: 812_345_678.123_456), Date(), Date(timeIntervalSince1970: -0.25),
      ] {
        event.date = date
        try events.save(event)
        #expect(try events.get(id: event.id)?.date == date)
      }
    }
  }

  private struct Stamped: Codable, Equatable {
    var date: Date
  }

  @Test("JSON dates read back bit for bit, edge fractions included, and old whole-second text still reads")
  func jsonDatesReadBackExactly() throws {
    var random = SeededRandom.make(test: "jsonDatesReadBackExactly")
    let coder = JSONCaskCoder()
    var intervals: [Double] = [0, 0.1, -0.1, -1e-20, 1e-20, -0.5, -0.75, -1, -1.5, 1.5e-7, 0.999_999_999_999_999_9]
    intervals += [-978_307_200.000_001, 1e10 + 0.5, -6e10 + 0.25, 812_345_678.123_456_7, 5_000_000.5]
    intervals += [Date.distantPast, Date.distantFuture].map(\.timeIntervalSinceReferenceDate)
    // Far dates (3.5e61 s came back as another date, found by fuzz-import): written as numbers.
    intervals += [
      3.5e61, -3.5e61, 1e12, -1e12, 1e12 - 0.5, 999_999_999_999.25, 1e15 + 0.5, -2.5e14, .greatestFiniteMagnitude,
    ]
    intervals += [-.greatestFiniteMagnitude, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, -6.3e10 - 0.125]
    for _ in 0..<testIterations(300) {
      let seconds = Double(Int64.random(in: -3_000_000_000...3_000_000_000, using: &random))
      intervals.append(seconds + Double(random.next() >> 11) / Double(1 << 53))
      intervals.append(Double(bitPattern: random.next() & 0x3FEF_FFFF_FFFF_FFFF) * (random.next() % 2 == 0 ? 1 : -1))
    }
    for _ in 0..<testIterations(100) {  // anywhere in the range of Double
      let magnitude = Double(sign: .plus, exponent: Int.random(in: 35...1000, using: &random), significand: 1.5)
      intervals.append(Double.random(in: -magnitude...magnitude, using: &random))
    }
    for interval in intervals {
      let stamped = Stamped(date: Date(timeIntervalSinceReferenceDate: interval))
      let decoded = try coder.decode(Stamped.self, from: coder.encode(stamped))
      #expect(decoded.date.timeIntervalSinceReferenceDate == interval, "\(interval), seed \(random.seed)")
    }
    // A plain JSONEncoder's dates (seconds since 2001 as a number) read too; an infinite date
    // is refused, never written as something else.
    #expect(
      try coder.decode(
        Stamped.self, from: JSONEncoder().encode(Stamped(date: Date(timeIntervalSinceReferenceDate: 7.25)))
      ).date.timeIntervalSinceReferenceDate == 7.25)
    #expect(throws: EncodingError.self) {
      try coder.encode(Stamped(date: Date(timeIntervalSinceReferenceDate: .infinity)))
    }
    // Whole seconds are written as JSONEncoder's .iso8601 wrote them, and its text still reads.
    let old = JSONEncoder()
    old.dateEncodingStrategy = .iso8601
    var wholes = [1_772_388_000, 0, -1, 951_782_400, 4_107_542_400, -2_208_988_800].map { Double($0) }
    wholes += (0..<testIterations(100)).map { _ in
      Double(Int64.random(in: -60_000_000_000...200_000_000_000, using: &random))
    }
    for seconds in wholes {
      let whole = Stamped(date: Date(timeIntervalSince1970: seconds))
      let oldText = try old.encode(whole)
      #expect(try coder.decode(Stamped.self, from: oldText) == whole, "\(seconds)")
      #expect(try coder.encode(whole) == oldText, "\(seconds)")
    }
  }

  @Test("operations on a closed store throw CaskError.closed")
  func closedStoreRefuses() throws {
    try withStore(options: .init(durability: .never), label: "closed") { store, _ throws in
      let events = store.collection(Event.self)
      try events.save(sampleEvents()[0])
      try store.close()
      #expect(throws: CaskError.closed) { try events.get(id: "a1") }
      #expect(throws: CaskError.closed) { try events.save(sampleEvents()[1]) }
      #expect(throws: CaskError.closed) { try events.all() }
      #expect(throws: CaskError.closed) { try events.ids() }
    }
  }
}

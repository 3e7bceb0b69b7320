import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `importJSON` and `upsert` must decode the Core Data events example's events field by field, count inserts and
/// replacements right (also for an id given twice), and refuse malformed JSON with
/// `CollectionError.invalidImport` without writing anything or quoting the data in the error.
@Suite("JSON import decodes, counts and refuses correctly")
struct ImportMistakeTests {
  @Test("the Core Data events example's events decode every field: snake_case keys, ISO 8601 dates, URLs, arrays")
  func seedEventsDecodeEveryField() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      #expect(try events.importJSON(sampleEventsJSON, decoder: .events) == .init(inserted: 3, replaced: 0))
      let e1 = try #require(try events.get(id: "e1"))
      #expect(e1.title == "Swift Meetup")
      #expect(e1.date == Date(timeIntervalSince1970: 1_772_388_000))
      #expect(e1.venue == "Hall A")
      #expect(e1.city == "Amsterdam")
      #expect(e1.country == "NL")
      #expect(e1.attendees == ["ann", "bob"])
      #expect(e1.fbUrl == URL(string: "https://example.com/fb/1"))
      #expect(e1.ticketUrl == URL(string: "https://example.com/t/1"))
      #expect(e1.eventId == "e1")
      #expect(try events.get(id: "e2")?.attendees == [])
    }
  }

  @Test("an id given twice in one import counts once and the last occurrence is stored")
  func duplicateIdsCountOnceLastWins() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      let json = Data(
        """
        [{"title": "First", "date": "2026-01-01T00:00:00Z", "venue": "V", "city": "C", "country": "NL",
          "attendees": [], "eventId": "d1"},
         {"title": "Other", "date": "2026-01-02T00:00:00Z", "venue": "V", "city": "C", "country": "NL",
          "attendees": [], "eventId": "d2"},
         {"title": "Last", "date": "2026-01-03T00:00:00Z", "venue": "V", "city": "C", "country": "NL",
          "attendees": [], "eventId": "d1"}]
        """.utf8)
      #expect(try events.importJSON(json, decoder: .events) == .init(inserted: 2, replaced: 0))
      #expect(try events.get(id: "d1")?.title == "Last")
      #expect(try events.get(id: "d1")?.fbUrl == nil)
      #expect(try events.importJSON(json, decoder: .events) == .init(inserted: 0, replaced: 2))
      #expect(events.count == 2)
    }
  }

  @Test("upsert counts inserted and replaced objects, an id given twice once")
  func upsertCounts() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      try counters.save(Counter(id: 1, value: 1))
      let result = try counters.upsert([
        Counter(id: 1, value: 10), Counter(id: 2, value: 20), Counter(id: 2, value: 21), Counter(id: 3, value: 30),
      ])
      #expect(result == .init(inserted: 2, replaced: 1))
      #expect(try counters.all().sorted { $0.id < $1.id }.map(\.value) == [10, 21, 30])
      #expect(try counters.upsert([Counter]()) == .init(inserted: 0, replaced: 0))
    }
  }

  @Test(
    "malformed or mistyped JSON throws invalidImport and writes nothing",
    arguments: [
      "", "not json", "[", "[{\"title\": 1}", "{\"title\": \"Swift Meetup\"}",
      """
      [{"title": "ok", "date": "2026-01-01T00:00:00Z", "venue": "V", "city": "C", "country": "NL",
        "attendees": [], "eventId": "n1"},
       {"title": "bad date", "date": "yesterday", "venue": "V", "city": "C", "country": "NL",
        "attendees": [], "eventId": "n2"}]
      """,
      """
      [{"title": "no id", "date": "2026-01-01T00:00:00Z", "venue": "V", "city": "C", "country": "NL",
        "attendees": []}]
      """,
      """
      [{"title": "wrong type", "date": "2026-01-01T00:00:00Z", "venue": "V", "city": "C", "country": "NL",
        "attendees": "ann", "eventId": "n3"}]
      """,
    ])
  func malformedJSONWritesNothing(json: String) throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.importJSON(sampleEventsJSON, decoder: .events)
      let log = CommitLog(store)
      let error = #expect(throws: CollectionError.self) { try events.importJSON(Data(json.utf8), decoder: .events) }
      if case .invalidImport(_, let line) = error {
        #expect(line == nil)
      } else {
        Issue.record("expected invalidImport, got \(String(describing: error))")
      }
      #expect(log.commits.isEmpty)
      #expect(try events.ids() == ["e1", "e2", "e3"])
      #expect(try events.get(id: "e1")?.title == "Swift Meetup")
    }
  }

  @Test("an invalidImport error does not quote the data it refused")
  func importErrorQuotesNoData() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      let json = Data(
        """
        [{"title": "Secret Gala", "date": "not-a-date-secret", "venue": "Hidden Venue", "city": "C",
          "country": "NL", "attendees": ["secret guest"], "eventId": "secret-id"}]
        """.utf8)
      let error = #expect(throws: CollectionError.self) { try events.importJSON(json, decoder: .events) }
      let text = String(describing: try #require(error))
      for secret in ["Secret Gala", "not-a-date-secret", "Hidden Venue", "secret guest", "secret-id"] {
        #expect(!text.contains(secret))
      }
      #expect(text.hasPrefix("invalid import"))
    }
  }

  @Test("seed JSON imported without the events decoder is refused, not half-decoded")
  func seedJSONWithoutSnakeCaseDecoderIsRefused() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      #expect(throws: CollectionError.self) { try events.importJSON(sampleEventsJSON) }
      #expect(events.count == 0)
    }
  }

  @Test("an import with an id too long for a key writes none of its objects")
  func importInvalidKeyWritesNothing() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      let long = String(repeating: "x", count: 70_000)
      let json = Data(
        """
        [{"title": "ok", "date": "2026-01-01T00:00:00Z", "venue": "V", "city": "C", "country": "NL",
          "attendees": [], "eventId": "fine"},
         {"title": "long", "date": "2026-01-01T00:00:00Z", "venue": "V", "city": "C", "country": "NL",
          "attendees": [], "eventId": "\(long)"}]
        """.utf8)
      #expect(throws: CaskError.self) { try events.importJSON(json, decoder: .events) }
      #expect(events.count == 0)
      #expect(store.count == 0)
    }
  }

  @Test("an empty array imports nothing and commits nothing")
  func emptyArrayImportsNothing() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      let log = CommitLog(store)
      #expect(try events.importJSON(Data("[]".utf8), decoder: .events) == .init(inserted: 0, replaced: 0))
      #expect(log.commits.isEmpty)
    }
  }
}

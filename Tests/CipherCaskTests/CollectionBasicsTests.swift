import CaskTestSupport
import CipherCask
import Foundation
import Testing

@Suite("Typed collections")
struct CollectionBasicsTests {
  @Test("events example: import events, filter by city, batch-update a venue, delete past events")
  func seedEventsWorkflow() throws {
    try withStore { store in
      let events = store.collection(Event.self)
      let first = try events.importJSON(sampleEventsJSON, decoder: .events)
      #expect(first == .init(inserted: 3, replaced: 0))
      let again = try events.importJSON(sampleEventsJSON, decoder: .events)
      #expect(again == .init(inserted: 0, replaced: 3))
      #expect(events.count == 3)
      let amsterdam = try events.filter { $0.city == "Amsterdam" }.map(\.id).sorted()
      #expect(amsterdam == ["e1", "e3"])
      let moved = try events.updateAll(where: { $0.venue == "Hall A" }) { $0.venue = "Main Hall" }
      #expect(moved == 1)
      #expect(try events.get(id: "e1")?.venue == "Main Hall")
      let cutoff = ISO8601DateFormatter().date(from: "2026-01-01T00:00:00Z")!
      #expect(try events.deleteAll(where: { $0.date < cutoff }) == 1)
      #expect(try events.contains(id: "e3") == false)
      let page = try events.fetch(sortedBy: { $0.date > $1.date }, limit: 1)
      #expect(page.map(\.id) == ["e2"])
      #expect(try events.get(id: "e2")?.ticketUrl == URL(string: "https://example.com/t/2"))
    }
  }

  @Test("malformed JSON import throws invalidImport and writes nothing")
  func malformedImport() throws {
    try withStore { store in
      let events = store.collection(Event.self)
      #expect(throws: CollectionError.self) { try events.importJSON(Data("[{\"title\": 1}".utf8), decoder: .events) }
      #expect(events.count == 0)
      #expect(store.count == 0)
    }
  }

  @Test("collections of different names never see each other's objects")
  func namesAreSeparate() throws {
    try withStore { store in
      let a = store.collection(Event.self, named: "a")
      let b = store.collection(Event.self, named: "b")
      try a.importJSON(sampleEventsJSON, decoder: .events)
      #expect(a.count == 3)
      #expect(b.count == 0)
      #expect(try b.all().isEmpty)
      #expect(try b.removeAll() == 0)
      #expect(try a.removeAll() == 3)
      #expect(store.count == 0)
    }
  }

  @Test("a store batch spans collections and commits all or nothing")
  func crossCollectionBatch() throws {
    try withStore { store in
      let events = store.collection(Event.self)
      let archive = store.collection(Event.self, named: "archive")
      try events.importJSON(sampleEventsJSON, decoder: .events)
      let old = try #require(try events.get(id: "e3"))
      try store.batch { batch in
        try batch.save(old, in: archive)
        try batch.delete(id: old.id, from: events)
      }
      #expect(try archive.get(id: "e3") == old)
      #expect(try events.get(id: "e3") == nil)
      struct Stop: Error {}
      #expect(throws: Stop.self) {
        try store.batch { batch in
          try batch.delete(id: "e1", from: events)
          throw Stop()
        }
      }
      #expect(try events.contains(id: "e1"))
    }
  }

  @Test("changes() reports inserted, updated and deleted ids per commit")
  func changeStream() async throws {
    try await withStore(options: .init(durability: .never), label: "changes") { store, _ async throws in
      let events = store.collection(Event.self)
      var iterator = events.changes().makeAsyncIterator()
      try await events.importJSON(sampleEventsJSON, decoder: .events)
      try await events.update(id: "e1") { $0.title = "Renamed" }
      try await events.delete(id: "e2")
      let inserted = await iterator.next()
      #expect(inserted?.inserted.sorted() == ["e1", "e2", "e3"])
      #expect(await iterator.next()?.updated == ["e1"])
      #expect(await iterator.next()?.deleted == ["e2"])
      try store.close()
    }
  }

  @Test("an object that no longer decodes is reported, and can be skipped by all()")
  func decodingFailure() throws {
    try withStore { store in
      let events = store.collection(Event.self)
      try events.importJSON(sampleEventsJSON, decoder: .events)
      try store.put(Data("{\"not\": \"an event\"}".utf8), forKey: "Event\u{0}broken")
      #expect(throws: CollectionError.decoding(collection: "Event", id: "broken", underlying: CancellationError())) {
        try events.get(id: "broken")
      }
      #expect(throws: CollectionError.self) { try events.all() }
      let result = try events.all(onDecodingFailure: .skip)
      #expect(result.objects.count == 3)
      #expect(
        result.failures == [
          CollectionError.decoding(collection: "Event", id: "broken", underlying: CancellationError())
        ])
      #expect(!String(describing: result.failures[0]).contains("broken"))
    }
  }
}

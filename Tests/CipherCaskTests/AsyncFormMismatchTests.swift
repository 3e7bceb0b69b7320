import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Every `async` form must do what its synchronous twin does: same results, same writes, same
/// errors.
@Suite("Async forms match their synchronous twins")
struct AsyncFormMismatchTests {
  private struct Refused: Error {}

  @Test("save, get, contains, delete, ids, all and count")
  func singleObjectForms() async throws {
    try await withStore("async-forms") { store in
      let events = store.collection(Event.self)
      let sample = sampleEvents()
      try await events.save(sample[0])
      try await events.save(contentsOf: Array(sample[1...]))
      #expect(try await events.get(id: "a2") == sample[1])
      #expect(try await events.get(id: "zz") == nil)
      #expect(try await events.contains(id: "a3"))
      #expect(try await events.delete(id: "a3"))
      #expect(try await events.delete(id: "a3") == false)
      #expect(try await events.contains(id: "a3") == false)
      #expect(try await events.ids() == ["a1", "a2", "a4"])
      #expect(try await events.all().count == 3)
      #expect(try await events.all(onDecodingFailure: .skip).failures.isEmpty)
      #expect(events.count == 3)
    }
  }

  @Test("filter, first(where:) and fetch")
  func queryForms() async throws {
    try await withStore("async-queries") { store in
      let events = store.collection(Event.self)
      try await events.save(contentsOf: sampleEvents())
      #expect(try await events.filter { $0.city == "Amsterdam" }.map(\.id).sorted() == ["a1", "a3"])
      #expect(try await events.first { $0.city == "Rotterdam" }?.id == "a4")
      #expect(try await events.first { $0.city == "Paris" } == nil)
      let page = try await events.fetch(
        where: { $0.country == "NL" }, sortedBy: { $0.date > $1.date }, limit: 2, offset: 1)
      #expect(page.map(\.id) == ["a3", "a2"])
      #expect(try await events.fetch(limit: 0).isEmpty)
      #expect(try await events.fetch(offset: 10).isEmpty)
      await #expect(throws: Refused.self) { try await events.filter { _ in throw Refused() } }
    }
  }

  @Test("update, updateAll, deleteAll, removeAll, upsert and importJSON")
  func writeForms() async throws {
    try await withStore("async-writes") { store in
      let events = store.collection(Event.self)
      let imported = try await events.importJSON(sampleEventsJSON, decoder: .events)
      #expect(imported == .init(inserted: 3, replaced: 0))
      let upserted = try await events.upsert(sampleEvents())
      #expect(upserted == .init(inserted: 4, replaced: 0))
      let updated = try await events.update(id: "e1") { $0.venue = "Attic" }
      #expect(updated?.venue == "Attic")
      let missing = try await events.update(id: "nope") { $0.venue = "Attic" }
      #expect(missing == nil)
      await #expect(throws: Refused.self) { try await events.update(id: "e2") { _ in throw Refused() } }
      await #expect(throws: CaskError.self) { try await events.update(id: "e2") { $0.eventId = "e9" } }
      #expect(try await events.updateAll(where: { $0.city == "Amsterdam" }) { $0.country = "Netherlands" } == 4)
      #expect(try await events.deleteAll { $0.country == "Netherlands" } == 4)
      #expect(try await events.removeAll() == 3)
      #expect(events.count == 0)
      await #expect(throws: CollectionError.self) { try await events.importJSON(Data("[1".utf8), decoder: .events) }
    }
  }
}

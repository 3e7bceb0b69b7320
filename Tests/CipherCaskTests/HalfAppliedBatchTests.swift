import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `save(contentsOf:)`, `update`, `updateAll`, `deleteAll` and `removeAll` must each be one
/// commit, applied whole or not at all: an error halfway (an object that does not encode, a
/// throwing closure, an id change) leaves the collection exactly as it was.
@Suite("Batch operations are applied whole or not at all")
struct HalfAppliedBatchTests {
  struct Item: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var value: Int
  }

  private struct Refused: Error {}

  @Test("save(contentsOf:) is one commit holding every object")
  func saveContentsIsOneCommit() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      let log = CommitLog(store)
      try events.save(contentsOf: sampleEvents())
      #expect(log.commits.count == 1)
      #expect(ids(in: log.commits[0], collection: "Event", kind: .inserted) == ["a1", "a2", "a3", "a4"])
      #expect(events.count == 4)
    }
  }

  @Test("save(contentsOf:) with an object that fails to encode writes none of them")
  func saveContentsEncodingFailureWritesNothing() throws {
    try withStore { store throws in
      let readings = store.collection(Reading.self, coder: JSONCaskCoder())
      try readings.save(Reading(id: "kept", value: 1))
      let log = CommitLog(store)
      let batch = [Reading(id: "r1", value: 2), Reading(id: "r2", value: .nan), Reading(id: "r3", value: 3)]
      #expect(throws: EncodingError.self) { try readings.save(contentsOf: batch) }
      #expect(log.commits.isEmpty)
      #expect(try readings.ids() == ["kept"])
    }
  }

  @Test("save(contentsOf:) with an id too long for a key writes none of them")
  func saveContentsInvalidKeyWritesNothing() throws {
    try withStore { store throws in
      let readings = store.collection(Reading.self)
      let log = CommitLog(store)
      let long = String(repeating: "k", count: 70_000)
      #expect(throws: CaskError.self) {
        try readings.save(contentsOf: [Reading(id: "r1", value: 1), Reading(id: long, value: 2)])
      }
      #expect(log.commits.isEmpty)
      #expect(readings.count == 0)
    }
  }

  @Test("save(contentsOf:) with an id twice stores the last one")
  func saveContentsDuplicateIdLastWins() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      try counters.save(contentsOf: [Counter(id: 1, value: 1), Counter(id: 2, value: 2), Counter(id: 1, value: 3)])
      #expect(counters.count == 2)
      #expect(try counters.get(id: 1)?.value == 3)
    }
  }

  @Test("update returns the saved object, in one commit")
  func updateReturnsSavedObject() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      let log = CommitLog(store)
      let updated = try events.update(id: "a2") { $0.venue = "Attic" }
      #expect(updated?.venue == "Attic")
      #expect(try events.get(id: "a2") == updated)
      #expect(log.commits.count == 1)
      #expect(ids(in: log.commits[0], collection: "Event", kind: .updated) == ["a2"])
    }
  }

  @Test("update of a missing id returns nil, never calls mutate, and writes nothing")
  func updateMissingIdWritesNothing() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(sampleEvents()[0])
      let before = store.stats()
      let log = CommitLog(store)
      var called = false
      #expect(try events.update(id: "missing") { _ in called = true } == nil)
      #expect(!called)
      #expect(log.commits.isEmpty)
      #expect(store.stats() == before)
      #expect(try events.contains(id: "missing") == false)
    }
  }

  @Test("update whose mutate throws rethrows and writes nothing")
  func updateThrowingMutateWritesNothing() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(sampleEvents()[0])
      let log = CommitLog(store)
      #expect(throws: Refused.self) {
        try events.update(id: "a1") { event in
          event.venue = "Changed"
          throw Refused()
        }
      }
      #expect(log.commits.isEmpty)
      #expect(try events.get(id: "a1") == sampleEvents()[0])
    }
  }

  @Test("update that changes the id is refused with invalidKey; neither id changes")
  func updateChangingIdIsRefused() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(sampleEvents()[0])
      let log = CommitLog(store)
      let error = #expect(throws: CaskError.self) { try events.update(id: "a1") { $0.eventId = "z9" } }
      if case .invalidKey = error {} else { Issue.record("expected invalidKey, got \(String(describing: error))") }
      #expect(log.commits.isEmpty)
      #expect(try events.get(id: "a1") == sampleEvents()[0])
      #expect(try events.contains(id: "z9") == false)
    }
  }

  @Test("updateAll changes exactly the matches in one commit and counts them")
  func updateAllIsOneCommit() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      let log = CommitLog(store)
      let moved = try events.updateAll(where: { $0.venue == "Hall A" }) { $0.venue = "Main Hall" }
      #expect(moved == 2)
      #expect(log.commits.count == 1)
      #expect(ids(in: log.commits[0], collection: "Event", kind: .updated) == ["a1", "a4"])
      #expect(try events.filter { $0.venue == "Main Hall" }.map(\.id).sorted() == ["a1", "a4"])
      #expect(try events.get(id: "a2")?.venue == "Loft")
      #expect(try events.updateAll(where: { _ in false }) { $0.venue = "never" } == 0)
      #expect(log.commits.count == 1)
    }
  }

  @Test("updateAll whose mutate throws on a later match writes none of the updates")
  func updateAllThrowingHalfwayWritesNothing() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      let log = CommitLog(store)
      #expect(throws: Refused.self) {
        try events.updateAll(where: { _ in true }) { event in
          if event.id == "a3" { throw Refused() }
          event.venue = "Changed"
        }
      }
      #expect(log.commits.isEmpty)
      #expect(try events.all().sorted { $0.id < $1.id } == sampleEvents())
    }
  }

  @Test("updateAll that changes an id is refused and writes none of the updates")
  func updateAllChangingIdWritesNothing() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      let log = CommitLog(store)
      #expect(throws: CaskError.self) {
        try events.updateAll(where: { _ in true }) { event in
          event.venue = "Changed"
          if event.id == "a4" { event.eventId = "a9" }
        }
      }
      #expect(log.commits.isEmpty)
      #expect(try events.ids() == ["a1", "a2", "a3", "a4"])
      #expect(try events.filter { $0.venue == "Changed" }.isEmpty)
    }
  }

  @Test("deleteAll removes exactly the matches in one commit and counts them")
  func deleteAllIsOneCommit() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      let log = CommitLog(store)
      #expect(try events.deleteAll(where: { $0.city == "Amsterdam" }) == 2)
      #expect(log.commits.count == 1)
      #expect(ids(in: log.commits[0], collection: "Event", kind: .deleted) == ["a1", "a3"])
      #expect(try events.ids() == ["a2", "a4"])
      #expect(try events.deleteAll(where: { $0.city == "Amsterdam" }) == 0)
      #expect(log.commits.count == 1)
    }
  }

  @Test("deleteAll whose predicate throws halfway deletes nothing")
  func deleteAllThrowingHalfwayDeletesNothing() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      let log = CommitLog(store)
      #expect(throws: Refused.self) {
        try events.deleteAll { event in
          if event.id == "a3" { throw Refused() }
          return true
        }
      }
      #expect(log.commits.isEmpty)
      #expect(events.count == 4)
    }
  }

  @Test("removeAll empties only this collection, in one commit, and counts")
  func removeAllIsOneCommit() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      let archive = store.collection(Event.self, named: "EventArchive")
      try events.save(contentsOf: sampleEvents())
      try archive.save(sampleEvents()[0])
      let log = CommitLog(store)
      #expect(try events.removeAll() == 4)
      #expect(log.commits.count == 1)
      #expect(ids(in: log.commits[0], collection: "Event", kind: .deleted) == ["a1", "a2", "a3", "a4"])
      #expect(events.count == 0)
      #expect(archive.count == 1)
      #expect(try events.removeAll() == 0)
      #expect(log.commits.count == 1)
    }
  }

  @Test("a batch of one store refuses a collection of another store instead of writing into itself")
  func batchWithCollectionOfAnotherStore() throws {
    try withTemporaryDirectory("batch-two-stores") { directory throws in
      let main = try CaskStore(path: directory.file("main.cask"), password: "pw", options: .init(durability: .never))
      defer { try? main.close() }
      let cache = try CaskStore(path: directory.file("cache.cask"), password: "pw", options: .init(durability: .never))
      defer { try? cache.close() }
      let cached = cache.collection(Item.self)
      var wrote = false
      do {
        try main.batch { batch in try batch.save(Item(id: "x", value: 1), in: cached) }
        wrote = true
      } catch {}
      // Either refused, or the object is where the collection says it is.
      let inCache = try cached.get(id: "x") != nil
      #expect(!wrote || inCache, "the batch succeeded but the cache store has no object")
      #expect(main.count == 0, "the object went into the batch's store, not the collection's")
    }
  }
}

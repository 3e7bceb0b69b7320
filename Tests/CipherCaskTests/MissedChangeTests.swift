import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `changes()` must report every commit to its collection, once, in order, as inserted,
/// updated and deleted ids; never a change to another collection; and its loop must end when
/// the consuming task is cancelled or the store is closed.
@Suite("Change streams miss nothing and see nothing of other collections")
struct MissedChangeTests {
  /// What a `CollectionChange` reported, comparable in expectations.
  private struct Seen<ID: Equatable & Sendable>: Equatable {
    var inserted: [ID] = []
    var updated: [ID] = []
    var deleted: [ID] = []
  }

  private static func seen<ID>(_ changes: [CollectionChange<ID>]) -> [Seen<ID>] {
    changes.map { Seen(inserted: $0.inserted, updated: $0.updated, deleted: $0.deleted) }
  }

  @Test("each commit is one element with its inserted, updated and deleted ids, in commit order")
  func oneElementPerCommit() async throws {
    try await withStore { store in
      let events = store.collection(Event.self)
      let collector = ChangeCollector(events.changes())
      let sample = sampleEvents()
      try await events.save(sample[0])
      try await events.save(sample[0])
      try await events.delete(id: "a1")
      try await events.delete(id: "a1")  // absent: no commit, no element
      try await events.save(contentsOf: sample)
      try await events.updateAll(where: { $0.city == "Amsterdam" }) { $0.title += "!" }
      try await events.deleteAll(where: { $0.venue == "Hall A" })
      try await events.upsert([sample[1], Event(sample[0], id: "a5")])
      try await events.removeAll()
      let received = await collector.wait(for: 8)
      let expected: [Seen<String>] = [
        Seen(inserted: ["a1"]), Seen(updated: ["a1"]), Seen(deleted: ["a1"]),
        Seen(inserted: ["a1", "a2", "a3", "a4"]), Seen(updated: ["a1", "a3"]),
        Seen(deleted: ["a1", "a4"]), Seen(inserted: ["a5"], updated: ["a2"]),
        Seen(deleted: ["a2", "a3", "a5"]),
      ]
      #expect(Self.seen(received).map(Self.sorted) == expected)
      await collector.cancel()
    }
  }

  @Test("the async forms report their commits too")
  func asyncFormsReport() async throws {
    try await withStore { store in
      let counters = store.collection(Counter.self)
      let collector = ChangeCollector(counters.changes())
      try await counters.save(Counter(id: 1, value: 0))
      try await counters.update(id: 1) { $0.value += 1 }
      try await counters.delete(id: 1)
      let received = await collector.wait(for: 3)
      #expect(Self.seen(received) == [Seen(inserted: [1]), Seen(updated: [1]), Seen(deleted: [1])])
      await collector.cancel()
    }
  }

  @Test("two collections, even with one name a prefix of the other, never see each other's changes")
  func collectionsAreSeparate() async throws {
    try await withStore { store in
      let events = store.collection(Event.self)
      let archive = store.collection(Event.self, named: "EventArchive")
      let counters = store.collection(Counter.self)
      let eventChanges = ChangeCollector(events.changes())
      let archiveChanges = ChangeCollector(archive.changes())
      let counterChanges = ChangeCollector(counters.changes())
      try await archive.save(sampleEvents()[0])
      try await counters.save(Counter(id: 1, value: 1))
      try store.batch { batch in
        try batch.save(sampleEvents()[1], in: events)
        try batch.delete(id: "a1", from: archive)
        try batch.save(Counter(id: 2, value: 2), in: counters)
      }
      try await events.save(sampleEvents()[2])
      #expect(Self.seen(await eventChanges.wait(for: 2)) == [Seen(inserted: ["a2"]), Seen(inserted: ["a3"])])
      #expect(Self.seen(await archiveChanges.wait(for: 2)) == [Seen(inserted: ["a1"]), Seen(deleted: ["a1"])])
      #expect(Self.seen(await counterChanges.wait(for: 2)) == [Seen(inserted: [1]), Seen(inserted: [2])])
      // Nothing more arrived meanwhile.
      #expect(eventChanges.changes.count == 2)
      #expect(archiveChanges.changes.count == 2)
      #expect(counterChanges.changes.count == 2)
      for collector in [eventChanges, archiveChanges] { await collector.cancel() }
      await counterChanges.cancel()
    }
  }

  @Test("UUID ids arrive parsed")
  func uuidIdsArriveParsed() async throws {
    try await withStore { store in
      let tags = store.collection(Tag.self)
      let collector = ChangeCollector(tags.changes())
      let tag = Tag(id: UUID(), name: "jazz")
      try await tags.save(tag)
      #expect(Self.seen(await collector.wait(for: 1)) == [Seen(inserted: [tag.id])])
      await collector.cancel()
    }
  }

  @Test("every stream of a collection gets every change")
  func everySubscriberGetsEverything() async throws {
    try await withStore { store in
      let counters = store.collection(Counter.self)
      let first = ChangeCollector(counters.changes())
      let second = ChangeCollector(store.collection(Counter.self).changes())
      for id in 0..<20 { try await counters.save(Counter(id: id, value: id)) }
      let expected = (0..<20).map { Seen(inserted: [$0]) }
      #expect(Self.seen(await first.wait(for: 20)) == expected)
      #expect(Self.seen(await second.wait(for: 20)) == expected)
      await first.cancel()
      await second.cancel()
    }
  }

  @Test("a for-await loop over changes() ends when its task is cancelled, and writes go on")
  func loopEndsOnCancellation() async throws {
    try await withStore { store in
      let counters = store.collection(Counter.self)
      let collector = ChangeCollector(counters.changes())
      try await counters.save(Counter(id: 1, value: 1))
      #expect(await collector.wait(for: 1).count == 1)
      #expect(!collector.hasFinished)
      await collector.cancel()
      #expect(collector.hasFinished)
      try await counters.save(Counter(id: 2, value: 2))
      #expect(collector.changes.count == 1)
      // A new stream on the same collection still works.
      let again = ChangeCollector(counters.changes())
      try await counters.save(Counter(id: 3, value: 3))
      #expect(Self.seen(await again.wait(for: 1)) == [Seen(inserted: [3])])
      await again.cancel()
    }
  }

  @Test("a stream released without being iterated does not disturb writes or later streams")
  func releasedStreamIsHarmless() async throws {
    try await withStore { store in
      let counters = store.collection(Counter.self)
      do { _ = counters.changes() }
      for id in 0..<5 { try await counters.save(Counter(id: id, value: id)) }
      let collector = ChangeCollector(counters.changes())
      try await counters.delete(id: 0)
      #expect(Self.seen(await collector.wait(for: 1)) == [Seen(deleted: [0])])
      await collector.cancel()
    }
  }

  @Test("a stream finishes when its store is closed, after every change committed before the close")
  func streamFinishesWhenStoreCloses() async throws {
    try await withStore(options: .init(durability: .never), label: "changes-close") { store, _ async throws in
      let counters = store.collection(Counter.self)
      let collector = ChangeCollector(counters.changes())
      let other = ChangeCollector(store.collection(Counter.self, named: "other").changes())
      for id in 0..<3 { try await counters.save(Counter(id: id, value: id)) }
      try store.close()
      // No cancel: the for-await loop must end by itself. (A generous bound, so that a broken
      // close fails the test instead of hanging it.)
      await waitUntil(seconds: 30) { collector.hasFinished && other.hasFinished }
      #expect(collector.hasFinished)
      #expect(other.hasFinished)
      #expect(Self.seen(collector.changes) == (0..<3).map { Seen(inserted: [$0]) })
      #expect(other.changes.isEmpty)
      // A stream asked for after the close is finished from the start.
      let late = ChangeCollector(counters.changes())
      await waitUntil(seconds: 30) { late.hasFinished }
      #expect(late.hasFinished)
      #expect(late.changes.isEmpty)
    }
  }

  private static func sorted(_ change: Seen<String>) -> Seen<String> {
    Seen(inserted: change.inserted.sorted(), updated: change.updated.sorted(), deleted: change.deleted.sorted())
  }
}

extension Event {
  /// A copy of `event` with another id.
  fileprivate init(_ event: Event, id: String) {
    self = event
    eventId = id
  }
}

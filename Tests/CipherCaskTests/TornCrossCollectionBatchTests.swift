import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `store.batch` with `CaskBatch.save(_:in:)` and `delete(id:from:)` must write objects of
/// several collections and types as one commit, or none of them.
@Suite("A batch across collections is never torn")
struct TornCrossCollectionBatchTests {
  private struct Refused: Error {}

  @Test("saves and deletes in three collections of three id types are one commit")
  func spansCollectionsInOneCommit() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      let counters = store.collection(Counter.self)
      let tags = store.collection(Tag.self)
      try events.save(contentsOf: sampleEvents())
      let tag = Tag(id: UUID(), name: "music")
      let log = CommitLog(store)
      try store.batch { batch in
        try batch.save(Counter(id: 7, value: 1), in: counters)
        try batch.save(tag, in: tags)
        try batch.delete(id: "a1", from: events)
        try batch.delete(id: "absent", from: events)
      }
      #expect(log.commits.count == 1)
      let commit = log.commits[0]
      #expect(ids(in: commit, collection: "Counter", kind: .inserted) == ["7"])
      #expect(ids(in: commit, collection: "Tag", kind: .inserted) == [tag.id.uuidString])
      #expect(ids(in: commit, collection: "Event", kind: .deleted) == ["a1"])
      #expect(commit.count == 3)
      #expect(try counters.get(id: 7) == Counter(id: 7, value: 1))
      #expect(try tags.get(id: tag.id) == tag)
      #expect(try events.contains(id: "a1") == false)
    }
  }

  @Test("a batch body that throws after saving in several collections writes none of it")
  func throwingBodyWritesNothing() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      let counters = store.collection(Counter.self)
      try events.save(contentsOf: sampleEvents())
      let log = CommitLog(store)
      #expect(throws: Refused.self) {
        try store.batch { batch in
          try batch.save(Counter(id: 1, value: 1), in: counters)
          try batch.delete(id: "a2", from: events)
          throw Refused()
        }
      }
      #expect(log.commits.isEmpty)
      #expect(counters.count == 0)
      #expect(events.count == 4)
    }
  }

  @Test("an object that fails to encode, or a refused collection name, fails the whole batch")
  func failingOperationFailsWholeBatch() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      let readings = store.collection(Reading.self, coder: JSONCaskCoder())
      let refused = store.collection(Counter.self, named: "bad\u{0}name")
      let log = CommitLog(store)
      #expect(throws: EncodingError.self) {
        try store.batch { batch in
          try batch.save(Counter(id: 1, value: 1), in: counters)
          try batch.save(Reading(id: "r", value: .infinity), in: readings)
        }
      }
      #expect(throws: CaskError.self) {
        try store.batch { batch in
          try batch.save(Counter(id: 2, value: 2), in: counters)
          try batch.save(Counter(id: 3, value: 3), in: refused)
        }
      }
      #expect(throws: CaskError.self) {
        try store.batch { batch in
          try batch.save(Counter(id: 4, value: 4), in: counters)
          try batch.delete(id: 3, from: refused)
        }
      }
      #expect(log.commits.isEmpty)
      #expect(store.count == 0)
    }
  }

  @Test("the last operation on an object in a batch wins")
  func lastOperationWins() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      let archive = store.collection(Counter.self, named: "archive")
      try counters.save(Counter(id: 1, value: 1))
      try store.batch { batch in
        try batch.delete(id: 1, from: counters)
        try batch.save(Counter(id: 1, value: 2), in: counters)
        try batch.save(Counter(id: 5, value: 5), in: archive)
        try batch.delete(id: 5, from: archive)
      }
      #expect(try counters.get(id: 1)?.value == 2)
      #expect(archive.count == 0)
    }
  }

  @Test("a transaction reads, saves and deletes objects of several collections, sees its writes, commits all or none")
  func transactionsOnCollections() throws {
    try withStore("collection-transactions") { store in
      let events = store.collection(Event.self)
      let counters = store.collection(Counter.self)
      let sample = sampleEvents()
      try events.save(contentsOf: sample)
      try counters.save(Counter(id: 1, value: 10))
      let moved = try store.transaction { transaction -> Int in
        guard var counter = try transaction.get(id: 1, from: counters) else { return -1 }
        #expect(try transaction.get(id: "a1", from: events)?.city == "Amsterdam")
        try transaction.delete(id: "a1", from: events)
        #expect(try transaction.get(id: "a1", from: events) == nil, "its own delete is seen")
        counter.value += 1
        try transaction.save(counter, in: counters)
        #expect(try transaction.get(id: 1, from: counters)?.value == 11, "its own save is seen")
        #expect(try counters.get(id: 1)?.value == 10, "nothing is committed before the body returns")
        return counter.value
      }
      #expect(moved == 11)
      #expect(try counters.get(id: 1)?.value == 11)
      #expect(try events.ids() == ["a2", "a3", "a4"])
      struct Stop: Error {}
      #expect(throws: Stop.self) {
        try store.transaction { transaction in
          try transaction.save(Counter(id: 2, value: 0), in: counters)
          try transaction.delete(id: "a2", from: events)
          throw Stop()
        }
      }
      #expect(try counters.ids() == [1] && events.count == 3, "a body that throws writes nothing")
      try withStore("collection-transactions-other") { other in
        let foreign = other.collection(Counter.self)
        #expect(throws: CaskError.self) { try store.transaction { try $0.save(Counter(id: 3, value: 0), in: foreign) } }
        #expect(throws: CaskError.self) { try store.transaction { _ = try $0.get(id: 1, from: foreign) } }
        #expect(throws: CaskError.self) { try store.transaction { try $0.delete(id: 1, from: foreign) } }
      }
      #expect(try counters.ids() == [1])
    }
  }
}

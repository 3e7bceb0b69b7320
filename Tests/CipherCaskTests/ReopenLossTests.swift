import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Closing and reopening a store must bring back every collection exactly: every object, every
/// replacement, no deleted object, the same counts and ids, for String, Int and UUID ids.
@Suite("Reopening a store loses nothing")
struct ReopenLossTests {
  @Test("close and open keeps every collection's objects, replacements and deletions")
  func reopenKeepsEverything() throws {
    try withTemporaryDirectory("reopen") { directory throws in
      let path = directory.file("s.cask")
      let tags = (0..<3).map { Tag(id: UUID(), name: "tag \($0)") }
      var expectedEvents: [Event] = []
      do {
        let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
        let events = store.collection(Event.self)
        try events.importJSON(sampleEventsJSON, decoder: .events)
        try events.save(contentsOf: sampleEvents())
        try events.update(id: "e1") { $0.venue = "Main Hall" }
        try events.deleteAll { $0.city == "Utrecht" }
        expectedEvents = try events.all()
        try store.collection(Counter.self).save(contentsOf: (0..<50).map { Counter(id: $0, value: $0 * $0) })
        try store.collection(Counter.self).removeAll()
        try store.collection(Counter.self, named: "kept").save(contentsOf: (0..<50).map { Counter(id: $0, value: $0) })
        try store.collection(Tag.self).save(contentsOf: tags)
        try store.collection(Tag.self).delete(id: tags[1].id)
        try store.close()
      }
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      let events = store.collection(Event.self)
      #expect(events.count == expectedEvents.count)
      #expect(try events.all().sorted { $0.id < $1.id } == expectedEvents.sorted { $0.id < $1.id })
      #expect(try events.get(id: "e1")?.venue == "Main Hall")
      #expect(try events.contains(id: "e2") == false)
      #expect(store.collection(Counter.self).count == 0)
      let kept = store.collection(Counter.self, named: "kept")
      #expect(try kept.all().sorted { $0.id < $1.id } == (0..<50).map { Counter(id: $0, value: $0) })
      let reopenedTags = store.collection(Tag.self)
      #expect(Set(try reopenedTags.ids()) == [tags[0].id, tags[2].id])
      #expect(try reopenedTags.get(id: tags[2].id) == tags[2])
      #expect(
        store.groups() == [
          .init(group: "Event", count: expectedEvents.count), .init(group: "Tag", count: 2),
          .init(group: "kept", count: 50),
        ])
    }
  }

  @Test("reopening after compaction keeps every object")
  func reopenAfterCompactionKeepsEverything() throws {
    try withTemporaryDirectory("reopen-compact") { directory throws in
      let path = directory.file("s.cask")
      let options = CaskStore.Options(durability: .never, segmentSizeLimit: 16 << 10, autoCompaction: nil)
      var expected: [Counter] = []
      do {
        let store = try CaskStore(path: path, password: "pw", options: options)
        let counters = store.collection(Counter.self)
        for round in 0..<5 {
          try counters.save(
            contentsOf: (0..<100).map { Counter(id: $0, value: round, label: String(repeating: "p", count: 40)) })
        }
        try counters.deleteAll { $0.id % 3 == 0 }
        try store.compact()
        expected = try counters.all().sorted { $0.id < $1.id }
        try store.close()
      }
      let store = try CaskStore(path: path, password: "pw", options: options)
      defer { try? store.close() }
      #expect(try store.collection(Counter.self).all().sorted { $0.id < $1.id } == expected)
      #expect(expected.count == 66)
    }
  }

  @Test("a wrong password opens nothing and reads nothing")
  func wrongPasswordReadsNothing() throws {
    try withTemporaryDirectory("reopen-wrong") { directory throws in
      let path = directory.file("s.cask")
      do {
        let store = try CaskStore(path: path, password: "right", options: .init(durability: .never))
        try store.collection(Event.self).save(contentsOf: sampleEvents())
        try store.close()
      }
      #expect(throws: CaskError.wrongPassword) { try CaskStore(path: path, password: "wrong") }
      let store = try CaskStore(path: path, password: "right")
      defer { try? store.close() }
      #expect(store.collection(Event.self).count == 4)
    }
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// A stored object of another shape must surface as `CollectionError.decoding(collection:id:)` (never
/// as a crash, a silently missing object, or a half-applied batch), be skippable by
/// `all(onDecodingFailure: .skip)`, and stay removable.
@Suite("Objects that no longer decode are reported, skippable and removable")
struct UnreadableObjectTests {
  /// A store whose "Event" collection holds the four sample events and two counters.
  private func withMixedStore(_ body: (CaskStore, CaskCollection<Event>) throws -> Void) throws {
    try withStore("unreadable") { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      let intruders = store.collection(Counter.self, named: "Event")
      try intruders.save(contentsOf: [Counter(id: 7, value: 7), Counter(id: 8, value: 8)])
      try body(store, events)
    }
  }

  private static func expectDecoding(_ body: () throws -> Void, ids: Set<String>, _ what: String) {
    do {
      try body()
      Issue.record("\(what) did not throw")
    } catch CollectionError.decoding(let collection, let id, let underlying) {
      #expect(collection == "Event", "\(what)")
      #expect(ids.contains(id), "\(what): id \(id)")
      #expect(underlying is DecodingError, "\(what)")
    } catch {
      Issue.record("\(what): expected CollectionError.decoding, got \(error)")
    }
  }

  @Test("get of an object of another shape throws decoding with the collection and id")
  func getThrowsDecoding() throws {
    try withMixedStore { _, events throws in
      Self.expectDecoding({ _ = try events.get(id: "7") }, ids: ["7"], "get")
      #expect(try events.get(id: "a1") == sampleEvents()[0])
      #expect(try events.contains(id: "7"))
      #expect(events.count == 6)
    }
  }

  @Test("whole-collection reads throw decoding unless asked to skip")
  func wholeReadsThrowDecoding() throws {
    try withMixedStore { _, events throws in
      let bad: Set<String> = ["7", "8"]
      Self.expectDecoding({ _ = try events.all() }, ids: bad, "all")
      Self.expectDecoding({ _ = try events.all(onDecodingFailure: .fail) }, ids: bad, "all(.fail)")
      Self.expectDecoding({ _ = try events.filter { _ in true } }, ids: bad, "filter")
      Self.expectDecoding({ _ = try events.fetch(limit: 1) }, ids: bad, "fetch")
      Self.expectDecoding({ _ = try events.first { $0.id == "none" } }, ids: bad, "first(where:)")
    }
  }

  @Test("all(onDecodingFailure: .skip) returns the readable objects and one failure per unreadable one")
  func skipReportsEachFailure() throws {
    try withMixedStore { _, events throws in
      let result = try events.all(onDecodingFailure: .skip)
      #expect(result.objects.sorted { $0.id < $1.id } == sampleEvents())
      var failedIds: [String] = []
      for failure in result.failures {
        guard case .decoding(let collection, let id, _) = failure else {
          Issue.record("unexpected failure \(failure)")
          continue
        }
        #expect(collection == "Event")
        failedIds.append(id)
      }
      #expect(failedIds.sorted() == ["7", "8"])
    }
  }

  @Test("the async all(onDecodingFailure: .skip) reports the same")
  func asyncSkipReportsEachFailure() async throws {
    try await withStore("unreadable-async") { store in
      let events = store.collection(Event.self)
      try await events.save(contentsOf: sampleEvents())
      try await store.collection(Counter.self, named: "Event").save(Counter(id: 9, value: 9))
      let result = try await events.all(onDecodingFailure: .skip)
      #expect(result.objects.count == 4)
      #expect(
        result.failures == [CollectionError.decoding(collection: "Event", id: "9", underlying: CancellationError())])
      await #expect(throws: CollectionError.self) { try await events.all() }
    }
  }

  @Test("updateAll and deleteAll over an unreadable object throw and write nothing")
  func batchesOverUnreadableObjectsWriteNothing() throws {
    try withMixedStore { store, events throws in
      let log = CommitLog(store)
      Self.expectDecoding(
        { _ = try events.updateAll(where: { _ in true }) { $0.venue = "x" } }, ids: ["7", "8"], "updateAll")
      Self.expectDecoding({ _ = try events.deleteAll { _ in true } }, ids: ["7", "8"], "deleteAll")
      Self.expectDecoding({ _ = try events.update(id: "8") { $0.venue = "x" } }, ids: ["8"], "update")
      #expect(log.commits.isEmpty)
      #expect(events.count == 6)
    }
  }

  @Test("unreadable objects can be deleted one by one or with removeAll, and the rest reads again")
  func unreadableObjectsAreRemovable() throws {
    try withMixedStore { _, events throws in
      #expect(try events.delete(id: "7"))
      let result = try events.all(onDecodingFailure: .skip)
      for failure in result.failures {
        if case .decoding(_, let id, _) = failure { #expect(try events.delete(id: id)) }
      }
      #expect(try events.all().count == 4)
      #expect(try events.removeAll() == 4)
    }
  }

  @Test("objects written by one coder do not decode with another, and say so")
  func otherCoderThrowsDecoding() throws {
    try withStore("unreadable-coder") { store throws in
      try store.collection(Event.self).save(sampleEvents()[0])
      let plist = store.collection(Event.self, coder: PropertyListCaskCoder())
      Self.expectDecoding({ _ = try plist.get(id: "a1") }, ids: ["a1"], "get with the other coder")
      #expect(try plist.all(onDecodingFailure: .skip).failures.count == 1)
    }
  }

  @Test("a decoding error's description names the collection but not the id or the data")
  func decodingErrorQuotesNoSecrets() throws {
    try withStore("unreadable-text") { store throws in
      try store.put(Data("{\"title\": \"Secret Gala\"}".utf8), forKey: "Event\u{0}secret-id")
      let error = #expect(throws: CollectionError.self) { try store.collection(Event.self).get(id: "secret-id") }
      let text = String(describing: try #require(error))
      #expect(text.contains("Event"))
      #expect(!text.contains("secret-id"))
      #expect(!text.contains("Secret Gala"))
    }
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Found by a review of the collection layer (session 8), each test failing before its fix:
/// the default-name guard missed other spellings of the store's path; the async
/// `save(contentsOf:)` and `upsert` took only arrays, so a slice ran the blocking form and
/// ignored cancellation (and `filter` and `fetch` read the whole collection before their first
/// check for cancellation: AsyncCancellationTests); a `Character` id collection trapped on
/// another type's id ""; and read-modify-write across collections (the guide's migration)
/// had no transaction form.
@Suite("Collections, second review: path spellings, slices, Character ids, transactions")
struct CollectionSecondReviewTests {
  @Test("the default-name guard knows the store under every spelling of its path")
  func defaultNameGuardSeesAliases() throws {
    let directory = try TemporaryDirectory("name-alias")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    do {
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      try store.collection(Feed.Item.self).save(Feed.Item(id: "1", title: "news"))
    }
    try FileManager.default.createSymbolicLink(atPath: directory.file("link.cask"), withDestinationPath: path)
    for alias in [directory.path + "/./s.cask", path + "/", directory.file("link.cask")] {
      let store = try CaskStore(path: alias, password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      let cart = store.collection(Cart.Item.self)
      #expect(throws: CaskError.self, "\(alias)") { _ = try cart.removeAll() }
      #expect(try store.collection(Feed.Item.self).ids() == ["1"], "\(alias): the first type's object is still there")
    }
  }

  @Test("the async save(contentsOf:) and upsert take any sequence, and follow cancellation with it")
  func asyncFormsTakeSequences() async throws {
    try await withStore("async-slices") { store in
      let events = store.collection(Event.self)
      let sample = sampleEvents()
      try await events.save(contentsOf: sample[0..<2])
      #expect(try await events.upsert(sample[1...]) == .init(inserted: 2, replaced: 1))
      try await events.removeAll()
      let outcome = await Task {
        withUnsafeCurrentTask { $0?.cancel() }
        do {
          try await events.save(contentsOf: sample[1...])
          return "saved"
        } catch is CancellationError {
          return "cancelled"
        } catch {
          return "\(error)"
        }
      }.value
      #expect(outcome == "cancelled")
      #expect(try await events.ids().isEmpty, "a cancelled save of a slice saved nothing")
    }
  }

  /// An id type that is one `Character`, whose `init(_:)` traps on any other text.
  struct Letter: Codable, Identifiable, Sendable, Equatable {
    var id: Character
    var word: String

    enum CodingKeys: String, CodingKey { case id, word }

    init(id: Character, word: String) {
      self.id = id
      self.word = word
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      let text = try container.decode(String.self, forKey: .id)
      guard text.count == 1, let first = text.first else {
        throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "not one character")
      }
      id = first
      word = try container.decode(String.self, forKey: .word)
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(String(id), forKey: .id)
      try container.encode(word, forKey: .word)
    }
  }

  struct Label: Codable, Identifiable, Sendable, Equatable {
    var id: String
  }

  @Test("a collection of Character ids passes over ids of another type that are not one character, without a trap")
  func characterIDsDoNotTrap() throws {
    try withStore("character-ids") { store in
      let labels = store.collection(Label.self, named: "t")
      try labels.save(contentsOf: [Label(id: ""), Label(id: "ab")])
      let letters = store.collection(Letter.self, named: "t")
      try letters.save(Letter(id: "é", word: "été"))
      #expect(try letters.ids() == ["é"])
      #expect(try letters.first { $0.word == "été" }?.id == "é")
      #expect(try labels.ids().count == 3, "the other type sees every key, its own and the letter's")
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

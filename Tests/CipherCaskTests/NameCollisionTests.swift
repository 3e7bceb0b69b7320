import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// A collection name is the part of a key before U+0000, so a name holding U+0000 (or an empty
/// one) would read or write another collection's keys: every call must refuse it with
/// `CaskError.invalidKey` and write nothing. Names that prefix each other must stay apart.
@Suite("Collection names never collide")
struct NameCollisionTests {
  private static func expectInvalidKey(_ body: () throws -> Void, _ what: String) {
    do {
      try body()
      Issue.record("\(what) was not refused")
    } catch let error as CaskError {
      if case .invalidKey = error {} else { Issue.record("\(what): expected invalidKey, got \(error)") }
    } catch {
      Issue.record("\(what): expected invalidKey, got \(error)")
    }
  }

  @Test(
    "a name containing U+0000, or an empty name, is refused by every call", arguments: ["Event\u{0}x", "\u{0}", ""])
  func badNamesAreRefused(name: String) throws {
    try withStore { store throws in
      let good = store.collection(Event.self, named: "Event")
      try good.save(contentsOf: sampleEvents())
      let bad = store.collection(Event.self, named: name)
      let event = sampleEvents()[0]
      let log = CommitLog(store)
      Self.expectInvalidKey({ try bad.save(event) }, "save")
      Self.expectInvalidKey({ try bad.save(contentsOf: [event]) }, "save(contentsOf:)")
      Self.expectInvalidKey({ _ = try bad.get(id: "a1") }, "get")
      Self.expectInvalidKey({ _ = try bad.contains(id: "a1") }, "contains")
      Self.expectInvalidKey({ _ = try bad.delete(id: "a1") }, "delete")
      Self.expectInvalidKey({ _ = try bad.ids() }, "ids")
      Self.expectInvalidKey({ _ = try bad.all() }, "all")
      Self.expectInvalidKey({ _ = try bad.all(onDecodingFailure: .skip) }, "all(onDecodingFailure:)")
      Self.expectInvalidKey({ _ = try bad.filter { _ in true } }, "filter")
      Self.expectInvalidKey({ _ = try bad.first { _ in true } }, "first(where:)")
      Self.expectInvalidKey({ _ = try bad.fetch() }, "fetch")
      Self.expectInvalidKey({ _ = try bad.update(id: "a1") { $0.venue = "x" } }, "update")
      Self.expectInvalidKey({ _ = try bad.updateAll(where: { _ in true }) { $0.venue = "x" } }, "updateAll")
      Self.expectInvalidKey({ _ = try bad.deleteAll { _ in true } }, "deleteAll")
      Self.expectInvalidKey({ _ = try bad.removeAll() }, "removeAll")
      Self.expectInvalidKey({ _ = try bad.upsert([event]) }, "upsert")
      Self.expectInvalidKey({ _ = try bad.importJSON(sampleEventsJSON, decoder: .events) }, "importJSON")
      Self.expectInvalidKey({ try store.batch { try $0.save(event, in: bad) } }, "batch save")
      Self.expectInvalidKey({ try store.batch { try $0.delete(id: "a1", from: bad) } }, "batch delete")
      Self.expectInvalidKey({ try store.transaction { try $0.save(event, in: bad) } }, "transaction save")
      Self.expectInvalidKey({ try store.transaction { _ = try $0.get(id: "a1", from: bad) } }, "transaction get")
      Self.expectInvalidKey({ try store.transaction { try $0.delete(id: "a1", from: bad) } }, "transaction delete")
      #expect(bad.count == 0)
      #expect(log.commits.isEmpty)
      #expect(try good.ids() == ["a1", "a2", "a3", "a4"])
    }
  }

  @Test("the async forms refuse a name containing U+0000 too")
  func asyncFormsRefuseBadNames() async throws {
    try await withStore { store in
      let bad = store.collection(Counter.self, named: "a\u{0}b")
      await #expect(throws: CaskError.self) { try await bad.save(Counter(id: 1, value: 1)) }
      await #expect(throws: CaskError.self) { try await bad.all() }
      await #expect(throws: CaskError.self) { try await bad.update(id: 1) { $0.value += 1 } }
      #expect(store.count == 0)
    }
  }

  @Test("names that prefix each other, and the same id in two collections, stay apart")
  func prefixNamesStayApart() throws {
    try withStore { store throws in
      let names = ["E", "Ev", "Event", "EventArchive", "Event "]
      for (index, name) in names.enumerated() {
        try store.collection(Counter.self, named: name).save(Counter(id: 1, value: index))
      }
      for (index, name) in names.enumerated() {
        let collection = store.collection(Counter.self, named: name)
        #expect(collection.count == 1)
        #expect(try collection.all() == [Counter(id: 1, value: index)])
        #expect(try collection.ids() == [1])
      }
      #expect(try store.collection(Counter.self, named: "Event").removeAll() == 1)
      #expect(store.count == names.count - 1)
      #expect(store.collection(Counter.self, named: "EventArchive").count == 1)
    }
  }

  @Test("names are case- and Unicode-exact")
  func namesAreExact() throws {
    try withStore { store throws in
      try store.collection(Counter.self, named: "café").save(Counter(id: 1, value: 1))
      #expect(store.collection(Counter.self, named: "Café").count == 0)
      #expect(try store.collection(Counter.self, named: "café").get(id: 1) != nil)
    }
  }

  @Test("two types of the same name (Feed.Item, Cart.Item) do not share the default collection: the second is refused")
  func sameNamedTypesAreRefused() throws {
    try withStore { store throws in
      let feed = store.collection(Feed.Item.self)
      let cart = store.collection(Cart.Item.self)
      #expect(feed.name == "Item" && cart.name == "Item")
      try feed.save(Feed.Item(id: "1", title: "news"))
      do {
        try cart.save(Cart.Item(id: "2", quantity: 3))
        Issue.record("the second type's save was not refused")
      } catch CaskError.invalidKey(let reason) {
        #expect(reason.contains("'Item'") && reason.contains("Cart.Item") && reason.contains("collection(_:named:)"))
      }
      Self.expectInvalidKey({ _ = try cart.removeAll() }, "removeAll")
      Self.expectInvalidKey({ _ = try cart.all() }, "all")
      #expect(cart.count == 0)
      #expect(try feed.ids() == ["1"], "the first type's objects were neither read nor deleted by the second")
      #expect(try store.collection(Feed.Item.self).get(id: "1")?.title == "news", "the first type keeps its name")
      try store.collection(Cart.Item.self, named: "CartItem").save(Cart.Item(id: "2", quantity: 3))
      #expect(store.collection(Cart.Item.self, named: "CartItem").count == 1)
    }
    try withStore { store throws in
      try store.collection(Cart.Item.self).save(Cart.Item(id: "9", quantity: 1))
      #expect(store.collection(Cart.Item.self).count == 1, "another store: the name is free there")
    }
  }

  @Test("default names are claimed per open store: a store made again at the same path starts with none")
  func defaultNamesEndWithTheirStore() throws {
    try withTemporaryDirectory("name-lifetime") { directory throws in
      let path = directory.file("s.cask")
      do {
        let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
        defer { try? store.close() }
        try store.collection(Feed.Item.self).save(Feed.Item(id: "1", title: "news"))
        #expect(throws: CaskError.self) { try store.collection(Cart.Item.self).save(Cart.Item(id: "2", quantity: 1)) }
      }
      try FileManager.default.removeItem(atPath: path)
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      try store.collection(Cart.Item.self).save(Cart.Item(id: "2", quantity: 1))
      #expect(try store.collection(Cart.Item.self).ids() == ["2"], "the old store's type held the name")
      #expect(throws: CaskError.self) { _ = try store.collection(Feed.Item.self).all() }
    }
  }
}

/// Two model types of the same name, nested in different types.
enum Feed {
  struct Item: Codable, Identifiable, Sendable {
    var id: String
    var title: String
  }
}

enum Cart {
  struct Item: Codable, Identifiable, Sendable {
    var id: String
    var quantity: Int
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CaskEngine

/// Found in review (session 6), each pinned by the failure it caused: calls on a collection
/// with an invalid name that did not refuse it (and a change stream that saw another
/// collection's object through it), ids that compare equal in Swift put in file order, pages
/// of a sorted fetch that moved when an object was re-saved, and a batch that wrote an object
/// meant for another store into its own.
@Suite("Collections: invalid names refused everywhere, stable order and pages, a batch keeps to its store")
struct CollectionReviewTests {
  struct Item: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var value: Int
  }

  // MARK: Bad names

  @Test("save(contentsOf:) of no objects on a collection with an invalid name throws invalidKey")
  func emptySaveOnBadNameIsRefused() throws {
    try withStore { store throws in
      for name in ["", "Item\u{0}x"] {
        let bad = store.collection(Item.self, named: name)
        #expect(throws: CaskError.self, "name \(name.debugDescription)") { try bad.save(contentsOf: [Item]()) }
        // "every throwing call on such a collection throws CaskError.invalidKey" (GUIDE.md, section 1)
        do {
          _ = try bad.importJSON(Data("[{".utf8))
          Issue.record("importJSON was not refused")
        } catch let error as CaskError {
          if case .invalidKey = error {} else { Issue.record("importJSON on name \(name.debugDescription): \(error)") }
        }
      }
    }
  }

  @Test("changes() of a collection with an invalid name reports no object of another collection")
  func badNameStreamSeesNoOtherCollection() async throws {
    try await withStore { store in
      let good = store.collection(Item.self, named: "Item")
      let bad = store.collection(Item.self, named: "Item\u{0}x")
      let collector = ChangeCollector(bad.changes())
      let control = ChangeCollector(good.changes())
      try await good.save(Item(id: "x\u{0}secret", value: 1))
      _ = await control.wait(for: 1)
      _ = await collector.wait(for: 1, seconds: 3)
      #expect(collector.changes.isEmpty, "got \(collector.changes.map(\.inserted))")
      await collector.cancel()
      await control.cancel()
    }
  }

  @Test("count of a collection named \"\" is 0 even when the store holds a key that starts with U+0000")
  func emptyNameCountsNothing() throws {
    try withStore { store throws in
      try store.put(Data("raw".utf8), forKey: "\u{0}raw")
      #expect(store.collection(Item.self, named: "").count == 0)
    }
  }

  // MARK: Id order

  @Test("fetch without sortedBy lists ids that compare equal in the same order as ids(), whatever the write order")
  func fetchTiesFollowIDs() throws {
    try withStore { store throws in
      let items = store.collection(Item.self)
      let composed = "\u{E9}"  // é, one code point
      let decomposed = "e\u{301}"  // e + combining acute: == composed in Swift, another key
      try items.save(Item(id: composed, value: 1))
      try items.save(Item(id: decomposed, value: 2))
      let ids = try items.ids()
      #expect(ids.count == 2)
      let fetched = try items.fetch().map(\.id)
      #expect(fetched.map { Array($0.utf8) } == ids.map { Array($0.utf8) }, "fetch and ids() disagree")
      #expect(try items.first { _ in true }?.value == items.fetch(limit: 1).first?.value)

      // Paging: re-saving one object (no id added or removed) must not move it to the other page.
      let page1 = try items.fetch(limit: 1, offset: 0).map(\.value)
      if let first = try items.fetch(limit: 1, offset: 0).first { try items.save(first) }
      let page2 = try items.fetch(limit: 1, offset: 1).map(\.value)
      #expect(Set(page1 + page2) == [1, 2], "pages \(page1) and \(page2)")
    }
  }

  @Test("fetch sorted by a field with ties pages the same objects after an unrelated re-save")
  func sortedTiesPageConsistently() throws {
    try withStore { store throws in
      let items = store.collection(Item.self)
      // Every object has the same value: the sort decides nothing, ids do not come into it.
      try items.save(contentsOf: (0..<6).map { Item(id: "i\($0)", value: 7) })
      let byValue: (Item, Item) -> Bool = { $0.value < $1.value }
      let first = try items.fetch(sortedBy: byValue, limit: 3, offset: 0).map(\.id)
      // Rewrite one object of the first page, unchanged: no id added, removed or changed.
      try items.save(Item(id: first[0], value: 7))
      let second = try items.fetch(sortedBy: byValue, limit: 3, offset: 3).map(\.id)
      #expect(Set(first + second).count == 6, "pages \(first) and \(second)")
    }
  }

  @Test("a batch of one store refuses a collection of another store instead of writing into itself")
  func batchWithCollectionOfAnotherStore() throws {
    let directory = try TemporaryDirectory("s6-two-stores")
    defer { directory.remove() }
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

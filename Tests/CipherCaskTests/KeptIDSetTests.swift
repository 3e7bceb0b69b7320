import CaskEngine
import CaskTestSupport
import Foundation
import Testing

@testable import CipherCask

/// The sets of a driver's ids kept with an index's entries between queries
/// (`IndexRuntime.EntriesBox`): served only to a plan whose copy of the entries is of the
/// generation the set was collected at, so that a page asked again after a write answers as
/// the entries are, never as they were.
@Suite("Kept sets of ids against changes to their index")
struct KeptIDSetTests {
  struct Item: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var city: String
    var rank: Int
  }

  static let cities = ["Lisbon", "Porto", "Faro", "Braga"]

  static let keys = try! RNCryptor.Keys(
    encryptionKey: Data(repeating: 0x51, count: 32), hmacKey: Data(repeating: 0x62, count: 32))

  /// The ids of the entries of `box` in `bounds`, as a query collects them.
  private static func collect(_ box: IndexRuntime.EntriesBox, _ bounds: EntryBounds) throws -> IDSet {
    try IDSet(.memory(box.entries), in: bounds, capacity: 4)
  }

  @Test("a set collected before a change to the entries is neither served nor kept after it")
  func keptSetFollowsGeneration() throws {
    let box = IndexRuntime.EntriesBox(IndexEntries(entries: ["a\u{0}id-00001", "a\u{0}id-00002", "b\u{0}id-00003"]))
    let bounds = EntryBounds.equal("a")
    let before = box.generation
    let set = try Self.collect(box, bounds)
    box.keep(set, in: bounds, at: before)
    #expect(box.idSet(in: bounds, at: before)?.count == 2)
    #expect(box.idSet(in: .equal("b"), at: before) == nil)

    // Inserting an entry already there, or removing one that is not, changes nothing.
    withUTF8Bytes("a\u{0}id-00001") { box.insert(entryBytes: $0) }
    withUTF8Bytes("c\u{0}id-00009") { box.remove(entryBytes: $0) }
    #expect(box.generation == before)
    #expect(box.idSet(in: bounds, at: before)?.count == 2)

    withUTF8Bytes("a\u{0}id-00004") { box.insert(entryBytes: $0) }
    #expect(box.generation != before)
    #expect(box.idSet(in: bounds, at: before) == nil)
    #expect(box.idSet(in: bounds, at: box.generation) == nil)
    // A query that took its copy before the change and collected the set after it.
    box.keep(set, in: bounds, at: before)
    #expect(box.idSet(in: bounds, at: box.generation) == nil)

    let now = box.generation
    box.keep(try Self.collect(box, bounds), in: bounds, at: now)
    #expect(box.idSet(in: bounds, at: now)?.count == 3)
    withUTF8Bytes("a\u{0}id-00002") { box.remove(entryBytes: $0) }
    #expect(box.idSet(in: bounds, at: now) == nil)
  }

  @Test("at most the bound of sets is kept, the least recently used dropped first")
  func keptSetsAreBounded() throws {
    let texts = (0...IndexRuntime.EntriesBox.maximumIDSets).map { "t\($0)" }
    let box = IndexRuntime.EntriesBox(IndexEntries(entries: texts.map { $0 + "\u{0}id-\($0)" }))
    let generation = box.generation
    for text in texts.dropLast() {
      box.keep(try Self.collect(box, .equal(text)), in: .equal(text), at: generation)
    }
    // The first is used again, so the second is the least recently used.
    #expect(box.idSet(in: .equal(texts[0]), at: generation) != nil)
    box.keep(try Self.collect(box, .equal(texts.last!)), in: .equal(texts.last!), at: generation)
    #expect(box.idSet(in: .equal(texts[1]), at: generation) == nil)
    for text in [texts[0]] + texts.dropFirst(2) {
      #expect(box.idSet(in: .equal(text), at: generation)?.count == 1, "\(text)")
    }
  }

  @Test("a set kept for a text is not served for a canonically equivalent text of other bytes")
  func keptSetKeyedByBytes() throws {
    let composed = "Caf\u{E9}"
    let decomposed = "Cafe\u{301}"
    #expect(composed == decomposed)
    let box = IndexRuntime.EntriesBox(
      IndexEntries(entries: [composed + "\u{0}id-00001", decomposed + "\u{0}id-00002"]))
    let generation = box.generation
    box.keep(try Self.collect(box, .equal(composed)), in: .equal(composed), at: generation)
    #expect(box.idSet(in: .equal(composed), at: generation)?.count == 1)
    #expect(box.idSet(in: .equal(decomposed), at: generation) == nil)
  }

  @Test("a page of a text answers with its own ids after a page of a canonically equivalent text")
  func pageOfEquivalentTextEqualsModel() throws {
    var random = SeededRandom.make(test: "KeptIDSetTests.pageOfEquivalentTextEqualsModel")
    try withTemporaryDirectory("kept-id-sets-equivalent") { directory in
      let options = CaskStore.Options(durability: .never, autoCompaction: nil)
      let store = try CaskStore(path: directory.file("store"), keys: Self.keys, options: options)
      defer { try? store.close() }
      let items = store.collection(
        Item.self, named: "items", indexes: [.index("city", \.city), .index("rank", \.rank)])
      // One city spelt two ways, as two texts, among others: the two have no id in common.
      let cities = ["Caf\u{E9}", "Cafe\u{301}"] + Self.cities
      let filled = (0..<2_000).map { number in
        Item(
          id: "item-\(1_000 + number)", city: cities.randomElement(using: &random)!,
          rank: Int.random(in: 0..<400, using: &random))
      }
      try items.save(contentsOf: filled)
      func expected(_ city: String) -> [String] {
        var inCity = filled.filter { Array($0.city.utf8) == Array(city.utf8) }
        inCity.sort { $0.rank != $1.rank ? $0.rank < $1.rank : Array($0.id.utf8).lexicographicallyPrecedes($1.id.utf8) }
        return Array(inCity.dropFirst(150).prefix(20).map(\.id))
      }
      for city in cities.prefix(2) + cities.prefix(2).reversed() {
        let query = items.query().where(\.city, equals: city).sorted(by: \.rank).offset(150).limit(20)
        #expect(try query.explain().contains("its ids collected first"))
        #expect(try query.ids() == expected(city), "\(Array(city.utf8))")
      }
    }
  }

  @Test("a page asked again after a save or delete answers as the model, never from the set kept before")
  func pageAfterChangeEqualsModel() throws {
    var random = SeededRandom.make(test: "KeptIDSetTests.pageAfterChangeEqualsModel")
    try withTemporaryDirectory("kept-id-sets") { directory in
      let options = CaskStore.Options(durability: .never, autoCompaction: nil)
      let store = try CaskStore(path: directory.file("store"), keys: Self.keys, options: options)
      defer { try? store.close() }
      let items = store.collection(
        Item.self, named: "items", indexes: [.index("city", \.city), .index("rank", \.rank)])
      var model: [String: Item] = [:]
      var next = 1_000
      func newItem(in city: String? = nil) -> Item {
        defer { next += 1 }
        return Item(
          id: "item-\(next)", city: city ?? Self.cities.randomElement(using: &random)!,
          rank: Int.random(in: 0..<400, using: &random))
      }
      let filled = (0..<2_000).map { _ in newItem() }
      try items.save(contentsOf: filled)
      for item in filled { model[item.id] = item }

      func expected(_ city: String, ascending: Bool, offset: Int) -> [String] {
        var inCity = model.values.filter { $0.city == city }
        inCity.sort { $0.rank != $1.rank ? $0.rank < $1.rank : Array($0.id.utf8).lexicographicallyPrecedes($1.id.utf8) }
        if !ascending { inCity.reverse() }
        return Array(inCity.dropFirst(offset).prefix(20).map(\.id))
      }

      var changed = 0
      let steps = testIterations(40)
      for _ in 0..<steps {
        let city = Self.cities.randomElement(using: &random)!
        let ascending = Bool.random(using: &random)
        let offset = Int.random(in: 150...300, using: &random)
        let query = items.query().where(\.city, equals: city).sorted(by: \.rank, ascending: ascending)
          .offset(offset).limit(20)
        #expect(try query.explain().contains("its ids collected first"))
        let before = try query.ids()
        #expect(before == expected(city, ascending: ascending, offset: offset))
        // A change to the city's set of ids: one of its objects before the page's end deleted
        // or moved to another city, or a new one saved into it.
        let ahead = expected(city, ascending: ascending, offset: 0).prefix(offset + 20)
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
          let id = ahead.randomElement(using: &random)!
          model[id] = nil
          #expect(try items.delete(id: id))
        case 1:
          var item = model[ahead.randomElement(using: &random)!]!
          item.city = Self.cities.filter { $0 != city }.randomElement(using: &random)!
          model[item.id] = item
          try items.save(item)
        default:
          let item = newItem(in: city)
          model[item.id] = item
          try items.save(item)
        }
        let after = try query.ids()
        #expect(after == expected(city, ascending: ascending, offset: offset))
        if after != before { changed += 1 }
      }
      // The changes were ones a stale set would have answered wrongly.
      #expect(changed > steps / 2)
    }
  }
}

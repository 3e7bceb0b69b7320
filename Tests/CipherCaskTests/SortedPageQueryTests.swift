import CaskEngine
import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Queries and saves of a collection reopened from a checkpoint with sorted pages: the
/// indexes are read through the pages (nothing built for a count, a page of a composite or
/// a save), and where a plan looks up many ids it builds the entries; every answer equals a
/// brute-force model's.
@Suite("Queries through a checkpoint's sorted pages")
struct SortedPageQueryTests {
  struct Item: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var city: String
    var rank: Int
    var code: String
    var tags: [String]
  }

  static let indexes: [CaskIndex<Item>] = [
    .index("city", \.city), .index("rank", \.rank), .unique("code", \.code), .index("tag", each: \.tags),
    .index("cityRank", \.city, \.rank),
  ]

  static func options() -> CaskStore.Options {
    var options = CaskStore.Options(durability: .never, autoCompaction: nil)
    options.checkpoints = CaskStore.Checkpoints(interval: 1 << 40, minimumKeys: 1)
    return options
  }

  static let keys = try! RNCryptor.Keys(
    encryptionKey: Data(repeating: 0x11, count: 32), hmacKey: Data(repeating: 0x22, count: 32))

  @Test("counts, pages, two conditions, sorted candidates, each, unique and saves after a reopen equal the model")
  func queriesAfterReopen() throws {
    var random = SeededRandom.make(test: "SortedPageQueryTests.queriesAfterReopen")
    try withTemporaryDirectory("sorted-page-queries") { directory in
      let path = directory.file("store")
      var model: [String: Item] = [:]
      do {
        let store = try CaskStore(path: path, keys: Self.keys, options: Self.options())
        let items = store.collection(Item.self, named: "items", indexes: Self.indexes)
        var batch: [Item] = []
        for number in 0..<testIterations(1_500) {
          let item = Item(
            id: String(format: "i%05d", number), city: ["Lisbon", "Porto", "Faro"][Int(random.next() % 3)],
            rank: Int(random.next() % 200), code: "c\(number)",
            tags: (0..<Int(random.next() % 3)).map { _ in "t\(random.next() % 9)" })
          batch.append(item)
          model[item.id] = item
        }
        try items.save(contentsOf: batch)
        try store.close()
      }
      let store = try CaskStore(path: path, keys: Self.keys, options: Self.options())
      defer { try? store.close() }
      #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
      let items = store.collection(Item.self, named: "items", indexes: Self.indexes)
      func ids(_ keep: (Item) -> Bool) -> [String] { model.values.filter(keep).map(\.id).sorted() }
      // A save first: its old texts come from the stored object, nothing is built.
      var moved = try #require(model["i00007"])
      moved.city = moved.city == "Lisbon" ? "Porto" : "Lisbon"
      moved.tags = ["t1", "t1", "t4"]
      try items.save(moved)
      model[moved.id] = moved
      #expect(throws: CollectionError.self) {
        try items.save(Item(id: "new", city: "Faro", rank: 1, code: "c3", tags: []))
      }
      #expect(try items.delete(id: "i00011"))
      model["i00011"] = nil
      for city in ["Lisbon", "Porto", "Faro", "Braga"] {
        #expect(try items.query().where(\.city, equals: city).count() == ids { $0.city == city }.count)
        let newest = try items.query().where(\.city, equals: city).sorted(by: \.rank, ascending: false).offset(3)
          .limit(20).fetch()
        let expected = model.values.filter { $0.city == city }.sorted { a, b in
          a.rank != b.rank ? a.rank > b.rank : a.id > b.id
        }
        #expect(newest == Array(expected.dropFirst(3).prefix(20)))
      }
      #expect(store.stats().sortedPageCacheBytes > 0)
      let low = Int(random.next() % 150)
      #expect(
        try items.query().where(\.rank, in: low...(low + 40)).where(\.tags, contains: "t2").ids().sorted()
          == ids { (low...(low + 40)).contains($0.rank) && $0.tags.contains("t2") })
      #expect(try items.query().where(\.tags, contains: "t1").ids() == ids { $0.tags.contains("t1") })
      #expect(try items.query().where(\.code, equals: "c3").ids() == ids { $0.code == "c3" })
      let byRank = try items.query().where(\.tags, contains: "t5").sorted(by: \.rank).limit(15).ids()
      let expectedByRank = model.values.filter { $0.tags.contains("t5") }.sorted { a, b in
        a.rank != b.rank ? a.rank < b.rank : a.id < b.id
      }
      #expect(byRank == Array(expectedByRank.prefix(15)).map(\.id))
      #expect(try items.verifyIndexes().isConsistent)
    }
  }
}

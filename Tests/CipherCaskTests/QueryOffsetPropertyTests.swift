import CaskEngine
import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Pages (`offset`, `limit`) of indexed queries against a brute-force model, through every
/// way a plan finds them: the offset skipped by rank (a composite's order, a sort index alone,
/// one text of an index without an order), the sort index walked and its ids looked up or
/// tested against the driver's ids, and the candidates sorted. Offsets at 0, across chunk
/// and page boundaries and beyond the end; after saves, moves and deletes since the last
/// checkpoint, and after reopening from it.
@Suite("Query pages at any offset against a model")
struct QueryOffsetPropertyTests {
  struct Item: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var city: String
    var rank: Int
    var tags: [String]
  }

  static let cities = ["Lisbon", "Porto", "Faro"]

  /// Two collections of the same objects: one where a city's page by rank has a composite
  /// index, one where it has only single-field indexes.
  static let composite: [CaskIndex<Item>] = [
    .index("city", \.city), .index("rank", \.rank), .index("tag", each: \.tags), .index("cityRank", \.city, \.rank),
  ]
  static let plain: [CaskIndex<Item>] = [.index("city", \.city), .index("rank", \.rank), .index("tag", each: \.tags)]

  static func options() -> CaskStore.Options {
    var options = CaskStore.Options(durability: .never, autoCompaction: nil)
    options.checkpoints = CaskStore.Checkpoints(interval: 1 << 40, minimumKeys: 1)
    return options
  }

  static let keys = try! RNCryptor.Keys(
    encryptionKey: Data(repeating: 0x31, count: 32), hmacKey: Data(repeating: 0x42, count: 32))

  /// Ids long enough that an index's entries fill several of a checkpoint's sorted pages.
  static func id(_ number: Int) -> String {
    String(format: "i%05d-", number) + String(repeating: "p", count: 90)
  }

  static func randomItem(_ number: Int, _ random: inout SeededRandom) -> Item {
    Item(
      id: id(number), city: cities[Int(random.next() % 3)], rank: Int(random.next() % 60),
      tags: (0..<Int(random.next() % 3)).map { _ in "t\(random.next() % 4)" })
  }

  /// An offset: 0, one near a chunk's edge (128 entries), one near the end or past it, or any.
  static func randomOffset(_ size: Int, _ random: inout SeededRandom) -> Int {
    switch random.next() % 5 {
    case 0: return 0
    case 1: return 126 + Int(random.next() % 5)
    case 2: return max(0, size - 3 + Int(random.next() % 8))
    default: return Int(random.next() % UInt64(size + 10))
    }
  }

  @Test("random pages of equalities, orders and both equal the model's, through reopens and changes since")
  func pagesEqualModel() throws {
    var random = SeededRandom.make(test: "QueryOffsetPropertyTests.pagesEqualModel")
    try withTemporaryDirectory("query-offsets") { directory in
      let path = directory.file("store")
      var model: [String: Item] = [:]
      var next = 0
      var store = try CaskStore(path: path, keys: Self.keys, options: Self.options())
      defer { try? store.close() }
      var plansSeen = Set<String>()
      var reopenedFromCheckpoint = 0
      for round in 0..<testIterations(6) {
        let withComposite = store.collection(Item.self, named: "composite", indexes: Self.composite)
        let withPlain = store.collection(Item.self, named: "plain", indexes: Self.plain)
        // Saves, moves and deletes, one at a time; after a reopen these are what changed since
        // the checkpoint. The first round fills both in one batch each.
        if round == 0 {
          let items = (0..<1_500).map { Self.randomItem($0, &random) }
          for item in items { model[item.id] = item }
          next = items.count
          for collection in [withComposite, withPlain] { try collection.save(contentsOf: items) }
        }
        for _ in 0..<Int(random.next() % 150) {
          let target = random.next() % 3 == 0 ? nil : model.keys.randomElement(using: &random)
          if let id = target, random.next() % 4 == 0 {
            model[id] = nil
            for collection in [withComposite, withPlain] { _ = try collection.delete(id: id) }
          } else {
            let number = target.map { Int($0.dropFirst().prefix(5))! } ?? next
            if target == nil { next += 1 }
            let item = Self.randomItem(number, &random)
            model[item.id] = item
            for collection in [withComposite, withPlain] { try collection.save(item) }
          }
        }
        for _ in 0..<20 {
          for collection in [withComposite, withPlain] {
            try checkPage(collection, model, &random, plans: &plansSeen)
          }
        }
        if round == 0 || random.next() % 2 == 0 {
          try store.close()
          store = try CaskStore(path: path, keys: Self.keys, options: Self.options())
          if store.stats().recovery.segmentsFromCheckpoint > 0 { reopenedFromCheckpoint += 1 }
        }
      }
      #expect(reopenedFromCheckpoint > 0)
      // Every way of finding a page was taken.
      for plan in ["cityRank", "its ids collected first", "sorted by the entries", "order from index 'rank'"] {
        #expect(plansSeen.contains { $0.contains(plan) }, "no plan with \(plan)")
      }
    }
  }

  /// One random query of `collection`, its ids and count checked against the model's.
  private func checkPage(
    _ collection: CaskCollection<Item>, _ model: [String: Item], _ random: inout SeededRandom,
    plans: inout Set<String>
  ) throws {
    let city = (Self.cities + ["Braga"])[Int(random.next() % 4)]
    let ascending = random.next() % 2 == 0
    var query = collection.query()
    var expected = model.values.sorted { $0.id < $1.id }
    switch random.next() % 4 {
    case 0:
      query = query.where(\.city, equals: city).sorted(by: \.rank, ascending: ascending)
      expected = expected.filter { $0.city == city }
      expected.sort { ($0.rank, $0.id) < ($1.rank, $1.id) }
      if !ascending { expected.reverse() }
    case 1:
      query = query.sorted(by: \.rank, ascending: ascending)
      expected.sort { ($0.rank, $0.id) < ($1.rank, $1.id) }
      if !ascending { expected.reverse() }
    case 2:
      query = query.where(\.city, equals: city)
      expected = expected.filter { $0.city == city }
    default:
      let tag = "t\(random.next() % 5)"
      query = query.where(\.tags, contains: tag)
      expected = expected.filter { $0.tags.contains(tag) }
    }
    let offset = Self.randomOffset(expected.count, &random)
    let limit = random.next() % 4 == 0 ? nil : Int(random.next() % 40)
    query = query.offset(offset)
    if let limit { query = query.limit(limit) }
    let page = Array(expected.dropFirst(offset).prefix(limit ?? .max))
    let plan = try query.explain()
    plans.insert(plan)
    #expect(try query.ids() == page.map(\.id), "\(plan), offset \(offset), limit \(String(describing: limit))")
    #expect(try query.count() == page.count)
    if random.next() % 4 == 0 { #expect(try query.fetch() == page) }
  }
}

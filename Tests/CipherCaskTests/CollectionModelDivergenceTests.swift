import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Random sequences of collection operations on two collections, checked after every step
/// against a plain `[Int: Counter]` per collection, with reopen and compaction steps. Prints its
/// seed; `CASK_TEST_SEED` replays a run and `CASK_TEST_ITERATIONS` makes it longer.
@Suite("Collections never diverge from a dictionary model")
struct CollectionModelDivergenceTests {
  private struct Refused: Error {}

  /// The model: one dictionary per collection name.
  private typealias Model = [String: [Int: Counter]]

  @Test("random saves, updates, deletes, batches, imports, reopens and compactions match the model")
  func randomOperationsMatchModel() throws {
    var random = SeededRandom.make(test: "CollectionModelDivergenceTests")
    try withTemporaryDirectory("collection-model") { directory throws in
      let path = directory.file("s.cask")
      let options = CaskStore.Options(
        durability: .never, segmentSizeLimit: 8 << 10,
        autoCompaction: .init(deadRatio: 0.3, minimumDeadBytes: 4 << 10))
      var store = try CaskStore(path: path, password: "pw", options: options)
      defer { try? store.close() }
      let names = ["a", "b"]
      var model: Model = ["a": [:], "b": [:]]
      let steps = testIterations(400)
      var nextValue = 0

      func randomCounter() -> Counter {
        nextValue += 1
        return Counter(
          id: Int.random(in: 0..<24, using: &random), value: nextValue, label: random.next() % 2 == 0 ? "x" : "y")
      }

      for step in 0..<steps {
        let name = names[Int(random.next() % 2)]
        let collection = store.collection(Counter.self, named: name)
        let context = "step \(step), seed \(random.seed)"
        switch random.next() % 16 {
        case 0, 1:
          let counter = randomCounter()
          try collection.save(counter)
          model[name, default: [:]][counter.id] = counter
        case 2:
          let counters = (0..<Int.random(in: 0...6, using: &random)).map { _ in randomCounter() }
          try collection.save(contentsOf: counters)
          for counter in counters { model[name, default: [:]][counter.id] = counter }
        case 3:
          let id = Int.random(in: 0..<24, using: &random)
          #expect(try collection.delete(id: id) == (model[name]?.removeValue(forKey: id) != nil), "\(context)")
        case 4, 5:
          let id = Int.random(in: 0..<24, using: &random)
          let result = try collection.update(id: id) { $0.value += 1000 }
          model[name]?[id]?.value += 1000
          #expect(result == model[name]?[id], "\(context)")
        case 6:
          let id = Int.random(in: 0..<24, using: &random)
          if model[name]?[id] != nil {
            #expect(throws: Refused.self, "\(context)") { try collection.update(id: id) { _ in throw Refused() } }
            #expect(throws: CaskError.self, "\(context)") { try collection.update(id: id) { $0.id += 100 } }
          } else {
            #expect(try collection.update(id: id) { _ in throw Refused() } == nil, "\(context)")
          }
        case 7:
          let label = random.next() % 2 == 0 ? "x" : "y"
          let updated = try collection.updateAll(where: { $0.label == label }, { $0.value += 1 })
          let matches = model[name, default: [:]].filter { $0.value.label == label }.map(\.key)
          for id in matches { model[name]?[id]?.value += 1 }
          #expect(updated == matches.count, "\(context)")
        case 8:
          let modulus = Int.random(in: 2...5, using: &random)
          let deleted = try collection.deleteAll { $0.id % modulus == 0 }
          let matches = model[name, default: [:]].keys.filter { $0 % modulus == 0 }
          for id in matches { model[name]?.removeValue(forKey: id) }
          #expect(deleted == matches.count, "\(context)")
        case 9:
          let counters = (0..<Int.random(in: 0...6, using: &random)).map { _ in randomCounter() }
          var expected = CaskCollection<Counter>.ImportResult(inserted: 0, replaced: 0)
          var seen = Set<Int>()
          for counter in counters where seen.insert(counter.id).inserted {
            if model[name]?[counter.id] == nil { expected.inserted += 1 } else { expected.replaced += 1 }
          }
          #expect(try collection.upsert(counters) == expected, "\(context)")
          for counter in counters { model[name, default: [:]][counter.id] = counter }
        case 10:
          if random.next() % 4 == 0 {
            #expect(try collection.removeAll() == model[name]?.count, "\(context)")
            model[name] = [:]
          }
        case 11:
          // A batch across both collections, sometimes abandoned.
          let saves = (0..<3).map { _ in (names[Int(random.next() % 2)], randomCounter()) }
          let deletes = (0..<2).map { _ in (names[Int(random.next() % 2)], Int.random(in: 0..<24, using: &random)) }
          let abandon = random.next() % 3 == 0
          do {
            try store.batch { batch in
              for (target, counter) in saves {
                try batch.save(counter, in: store.collection(Counter.self, named: target))
              }
              for (target, id) in deletes {
                try batch.delete(id: id, from: store.collection(Counter.self, named: target))
              }
              if abandon { throw Refused() }
            }
            for (target, counter) in saves { model[target, default: [:]][counter.id] = counter }
            for (target, id) in deletes { model[target]?.removeValue(forKey: id) }
          } catch is Refused {
            #expect(abandon, "\(context)")
          }
        case 12:
          if random.next() % 3 == 0 {
            try store.close()
            store = try CaskStore(path: path, password: "pw", options: options)
          } else {
            try store.compact()
          }
        default:
          let id = Int.random(in: 0..<24, using: &random)
          #expect(try collection.get(id: id) == model[name]?[id], "\(context)")
          #expect(try collection.contains(id: id) == (model[name]?[id] != nil), "\(context)")
          let first = try collection.first { $0.id == id }
          #expect(first == model[name]?[id], "\(context)")
        }
        for name in names {
          let collection = store.collection(Counter.self, named: name)
          #expect(collection.count == model[name, default: [:]].count, "\(context), \(name)")
        }
        if step % 25 == 0 || step == steps - 1 { try Self.checkEverything(store, model, context) }
      }
    }
  }

  private static func checkEverything(_ store: CaskStore, _ model: Model, _ context: String) throws {
    for (name, objects) in model {
      let collection = store.collection(Counter.self, named: name)
      #expect(
        try collection.ids() == objects.keys.sorted())
      #expect(Set(try collection.all()) == Set(objects.values), "\(context), \(name)")
    }
  }
}

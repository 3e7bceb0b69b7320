import CaskTestSupport
import CipherCask
import Foundation
import Synchronization
import Testing

@Suite("Secondary indexes under concurrent readers and writers")
struct IndexConcurrencyTests {
  @Test("readers querying while writers move objects between cities see only matching objects")
  func readersWhileWritersChangeIndexedFields() throws {
    try withIndexStore("index-concurrency") { store, _ in
      let gigs = store.gigs()
      let cities = ["Lisbon", "Porto", "Faro"]
      try gigs.save(contentsOf: (0..<60).map { Gig.make("g\($0)", city: cities[$0 % 3], seats: $0) })
      _ = try gigs.query().where(\.city, equals: "Lisbon").count()
      let failures = Atomic<Int>(0)
      let errors = Atomic<Int>(0)
      DispatchQueue.concurrentPerform(iterations: 6) { worker in
        var random = SeededRandom(seed: UInt64(worker + 1))
        for _ in 0..<150 {
          do {
            if worker < 2 {
              let id = "g\(Int.random(in: 0..<60, using: &random))"
              let city = cities.randomElement(using: &random)!
              if Bool.random(using: &random) {
                try gigs.update(id: id) { $0.city = city }
              } else {
                try store.batch { batch in
                  try batch.save(.make(id, city: city, seats: Int.random(in: 0...59, using: &random)), in: gigs)
                }
              }
            } else {
              let city = cities.randomElement(using: &random)!
              let page = try gigs.query().where(\.city, equals: city).sorted(by: \.seats).limit(10).fetch()
              if page.contains(where: { $0.city != city }) { failures.add(1, ordering: .relaxed) }
              if zip(page, page.dropFirst()).contains(where: { $0.seats > $1.seats }) {
                failures.add(1, ordering: .relaxed)
              }
              let counted = try gigs.query().where(\.city, equals: city).count()
              if counted < 0 || counted > 60 { failures.add(1, ordering: .relaxed) }
            }
          } catch {
            errors.add(1, ordering: .relaxed)
          }
        }
      }
      #expect(failures.load(ordering: .relaxed) == 0)
      #expect(errors.load(ordering: .relaxed) == 0)
      #expect(gigs.count == 60)
      let total = try cities.map { try gigs.query().where(\.city, equals: $0).count() }.reduce(0, +)
      #expect(total == 60)
      #expect(try gigs.verifyIndexes().isConsistent)
    }
  }

  @Test("readers querying through a checkpoint's sorted pages, with a cache of two pages, while writers move objects")
  func readersThroughSortedPagesWhileWritersChange() throws {
    let directory = try TemporaryDirectory("index-concurrency-sorted")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    var options = CaskStore.Options(durability: .never, autoCompaction: nil)
    // A cache of two pages: readers evict what other readers are walking.
    options.checkpoints = CaskStore.Checkpoints(interval: 1 << 40, minimumKeys: 1, sortedPageCacheBytes: 64 << 10)
    let cities = ["Lisbon", "Porto", "Faro"]
    let count = 3_000
    do {
      let store = try CaskStore(path: path, password: "pw", options: options)
      try store.gigs().save(contentsOf: (0..<count).map { Gig.make("g\($0)", city: cities[$0 % 3], seats: $0 % 97) })
      try store.close()
    }
    let store = try CaskStore(path: path, password: "pw", options: options)
    defer { try? store.close() }
    let gigs = store.gigs()
    let failures = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: 6) { worker in
      var random = SeededRandom(seed: UInt64(worker + 11))
      for _ in 0..<60 {
        do {
          if worker < 2 {
            let id = "g\(Int.random(in: 0..<count, using: &random))"
            let city = cities.randomElement(using: &random)!
            try gigs.update(id: id) { $0.city = city }
          } else {
            let city = cities.randomElement(using: &random)!
            let page = try gigs.query().where(\.city, equals: city).offset(Int.random(in: 0..<900, using: &random))
              .limit(10).fetch()
            if page.contains(where: { $0.city != city }) { failures.add(1, ordering: .relaxed) }
            let counted = try gigs.query().where(\.city, equals: city).count()
            if counted < 0 || counted > count { failures.add(1, ordering: .relaxed) }
          }
        } catch {
          errors.add(1, ordering: .relaxed)
        }
      }
    }
    #expect(failures.load(ordering: .relaxed) == 0)
    #expect(errors.load(ordering: .relaxed) == 0)
    #expect(store.stats().sortedPageCacheBytes > 0, "the queries did not read the sorted pages")
    #expect(store.stats().sortedPageCacheBytes <= 64 << 10)
    let total = try cities.map { try gigs.query().where(\.city, equals: $0).count() }.reduce(0, +)
    #expect(total == count)
    #expect(try gigs.verifyIndexes().isConsistent)
  }
}

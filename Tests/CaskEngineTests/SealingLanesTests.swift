import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A large batch seals its records on several threads (`SealingLanes`); what it writes must be
/// what one thread writes: every record in its place, bound to it, in order.
@Suite("Sealing lanes")
struct SealingLanesTests {
  private struct ItemFailure: Error, Equatable {
    let item: Int
  }

  @Test("map gives every item once, in order, whatever the number of lanes")
  func mapKeepsOrder() throws {
    for count in [0, 1, 2, 7, 129, 1000] {
      for lanes in [1, 2, 3, 4, 8] {
        let calls = Locked([Int](repeating: 0, count: max(count, 1)))
        let mapped = try SealingLanes.map(count: count, lanes: lanes) { item in
          calls.withLock { $0[item] += 1 }
          return item * 3
        }
        #expect(mapped == (0..<count).map { $0 * 3 }, "count \(count), lanes \(lanes)")
        #expect(calls.withLock { $0.prefix(count).allSatisfy { $0 == 1 } }, "count \(count), lanes \(lanes)")
      }
    }
  }

  @Test("the error thrown is the first failing item's in item order, after every lane ended")
  func firstFailureInItemOrder() {
    let started = Locked(0)
    #expect(throws: ItemFailure(item: 300)) {
      try SealingLanes.forEach(count: 1000, lanes: 4) { item in
        started.withLock { $0 += 1 }
        if item == 300 || item == 800 { throw ItemFailure(item: item) }
      }
    }
    // Each lane stops at its own failure: lane 1 (250..<500) after 51 items, lane 3
    // (750..<1000) after 51; the others run to their end.
    let calls = started.withLock { $0 }
    #expect(calls == 602)
  }

  @Test("small work stays on the calling thread; large work gets lanes up to the limit")
  func laneCounts() {
    let cases: [(count: Int, bytes: Int, limit: Int, lanes: Int)] = [
      (10, 10_240, 4, 1),
      (1000, 1_048_576, 4, 4),
      (1000, 1_048_576, 1, 1),
      (1000, 1_048_576, 0, 1),
      (40, 65_536, 4, 2),
      (300, 0, 4, 2),
      (3, 10_485_760, 8, 3),
    ]
    for example in cases {
      let lanes = SealingLanes.lanes(count: example.count, bytes: example.bytes, limit: example.limit)
      #expect(lanes == example.lanes, "\(example)")
    }
  }

  @Test("a batch sealed on several threads reads back, verifies and reopens as one sealed on one thread")
  func parallelBatchMatchesSerial() throws {
    var random = SeededRandom.make(test: "parallelBatchMatchesSerial")
    for round in 0..<testIterations(3) {
      var batches: [[(key: String, value: Data?)]] = []
      for _ in 0..<4 {
        let count = Int.random(in: 1...600, using: &random)
        batches.append(
          (0..<count).map { _ in
            let key = "k\(Int.random(in: 0..<400, using: &random))"
            let deletes = Int.random(in: 0..<5, using: &random) == 0
            return (key, deletes ? nil : random.bytes(Int.random(in: 0...3000, using: &random)))
          })
      }
      var contents: [[String: Data]] = []
      for threads in [1, 4] {
        var options = testStoreOptions
        options.sealingThreads = threads
        try withStore(options: options, label: "lanes") { store, path in
          for operations in batches {
            try store.batch { batch in
              for (key, value) in operations {
                if let value { try batch.put(value, forKey: key) } else { try batch.delete(key) }
              }
            }
          }
          #expect(try store.verify().isClean, "round \(round), \(threads) threads")
          try store.close()
          let reopened = try CaskStore(path: path, password: testPassword, options: options)
          defer { try? reopened.close() }
          #expect(reopened.stats().recovery.isClean, "round \(round), \(threads) threads")
          var values: [String: Data] = [:]
          for key in try reopened.keys() { values[key] = try reopened.get(key) }
          contents.append(values)
        }
      }
      var expected: [String: Data] = [:]
      for operations in batches {
        for (key, value) in operations { expected[key] = value }
      }
      #expect(contents[0] == expected.compactMapValues { $0 }, "round \(round)")
      #expect(contents[1] == contents[0], "round \(round)")
    }
  }
}

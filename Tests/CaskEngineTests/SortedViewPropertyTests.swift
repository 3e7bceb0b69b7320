import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A sorted group's view (the checkpoint's sorted pages merged with what changed since)
/// against a brute-force sorted array of the group's keys: counts of random ranges and
/// prefixes, walks forward and backward from random ranks with random limits, after random
/// puts, deletes, batches, clean reopens, crashes (the directory copied while the store is
/// open, so that open replays the log after the checkpoint) and compactions.
@Suite("Sorted view: counts and walks equal a sorted array")
struct SortedViewPropertyTests {
  static let group = "\u{1}idx"

  static func entry(_ random: inout SeededRandom) -> [UInt8] {
    Array("t\(random.next() % 40)-shared-text-part\u{0}i\(random.next() % 400)".utf8)
  }

  static func bound(_ random: inout SeededRandom) -> [UInt8]? {
    switch random.next() % 4 {
    case 0: return nil
    case 1: return Array("t\(random.next() % 45)".utf8)
    default: return entry(&random)
    }
  }

  @Test("random changes, reopens, crashes and compactions: every count and walk equals the model's")
  func viewEqualsModel() throws {
    var random = SeededRandom.make(test: "SortedViewPropertyTests.viewEqualsModel")
    try withTemporaryDirectory("sorted-view") { directory in
      var path = directory.file("store-0")
      var copies = 0
      var store = try CheckpointFixture.open(path)
      var model = Set<[UInt8]>()
      var viewsChecked = 0
      defer { try? store.close() }
      for _ in 0..<testIterations(16) {
        let changes = Int(random.next() % 3 == 0 ? 3_000 : random.next() % 300)
        var batch: [([UInt8], Bool)] = []
        for _ in 0..<changes { batch.append((Self.entry(&random), random.next() % 3 != 0)) }
        if random.next() % 2 == 0 {
          try store.batch { writer in
            for (entry, present) in batch {
              let key = Self.group + "\u{0}" + String(decoding: entry, as: UTF8.self)
              if present { try writer.put(Data(), forKey: key) } else { try writer.delete(key) }
            }
          }
        } else {
          for (entry, present) in batch {
            let key = Self.group + "\u{0}" + String(decoding: entry, as: UTF8.self)
            if present { try store.put(Data(), forKey: key) } else { try store.delete(key) }
          }
        }
        for (entry, present) in batch {
          if present { model.insert(entry) } else { model.remove(entry) }
        }
        switch random.next() % 5 {
        case 0:
          try store.close()
          store = try CheckpointFixture.open(path)
        case 1:
          copies += 1
          let copy = directory.file("store-\(copies)")
          // The files as they are, with no close (the background hint writes finished first).
          store.hintQueue.drain()
          try CheckpointFixture.copy(path, to: copy)
          try store.close()
          path = copy
          store = try CheckpointFixture.open(path)
        case 2:
          _ = try store.compact()
        default:
          break
        }
        if try check(store, model, &random) { viewsChecked += 1 }
      }
      #expect(viewsChecked > 0)
    }
  }

  /// Compares the view with the model; `false` when the store has no view (not opened from a
  /// checkpoint with sorted pages).
  private func check(_ store: CaskStore, _ model: Set<[UInt8]>, _ random: inout SeededRandom) throws -> Bool {
    guard let view = try store.sortedView(ofGroup: Self.group) else { return false }
    let sorted = model.sorted { SortedKeyOrder.compare($0, $1) < 0 }
    #expect(view.count == sorted.count)
    func rank(_ bound: [UInt8]?, upper: Bool) -> Int {
      guard let bound else { return upper ? sorted.count : 0 }
      return sorted.firstIndex { SortedKeyOrder.compare($0, bound) >= 0 } ?? sorted.count
    }
    for _ in 0..<20 {
      let lower = Self.bound(&random)
      let upper = Self.bound(&random)
      let low = rank(lower, upper: false)
      let high = max(low, rank(upper, upper: true))
      #expect(try view.count(from: lower, to: upper) == high - low)
      let descending = random.next() % 2 == 0
      let skipping = Int(random.next() % UInt64(max(1, high - low + 3)))
      let limit = 1 + Int(random.next() % 50)
      var walked: [[UInt8]] = []
      try view.walk(from: lower, to: upper, descending: descending, skipping: skipping) { key in
        walked.append(Array(key))
        return walked.count < limit
      }
      let range = Array(sorted[low..<high])
      let expected = Array((descending ? Array(range.reversed()) : range).dropFirst(skipping).prefix(limit))
      #expect(
        walked == expected, "lower \(lower.map { String(decoding: $0, as: UTF8.self) } ?? "-") skipping \(skipping)")
    }
    let prefix = Array("t\(random.next() % 40)-".utf8)
    #expect(try view.count(prefix: prefix) == sorted.filter { $0.starts(with: prefix) }.count)
    return true
  }
}

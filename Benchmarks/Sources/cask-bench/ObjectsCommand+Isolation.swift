import CipherCask
import Foundation
import PeerKit

/// The isolation cost rule, measured: `all()` of a collection of 10,000 `BenchObject`s in a store
/// that holds only them ("alone"), and in a store that holds the same collection plus other
/// objects in another collection, up to `storeKeys` keys in all ("crowded"). The crowd is
/// written interleaved with the collection (about 99 others between two of its objects at
/// 1,000,000 keys), so the collection's records are spread over the whole log, not packed at
/// its start. Both stores stay open; the runs alternate (alone, crowded, alone, ...) so noise
/// lands on both, and the ratio is of the medians.
extension ObjectsCommand {
  struct Isolation: Codable {
    /// Objects in the listed collection, in both stores.
    let objects: Int
    /// Keys in the crowded store, the collection included.
    let storeKeys: Int
    let runs: Int
    /// Seconds of each `all()` call.
    let aloneSeconds: [Double]
    let crowdedSeconds: [Double]
    /// Seconds to fill the crowded store (batches of 1,000 objects, durability never).
    let fillSeconds: Double

    /// The medians and their ratio, crowded ÷ alone (the rule asks for at most 2), stored so
    /// that the JSON report reads on its own.
    let aloneMedian: Double
    let crowdedMedian: Double
    let ratio: Double

    init(
      objects: Int, storeKeys: Int, runs: Int, aloneSeconds: [Double], crowdedSeconds: [Double], fillSeconds: Double
    ) {
      self.objects = objects
      self.storeKeys = storeKeys
      self.runs = runs
      self.aloneSeconds = aloneSeconds
      self.crowdedSeconds = crowdedSeconds
      self.fillSeconds = fillSeconds
      aloneMedian = Statistics.median(aloneSeconds)
      crowdedMedian = Statistics.median(crowdedSeconds)
      ratio = crowdedMedian / Swift.max(aloneMedian, 1e-9)
    }
  }

  /// Objects in the listed collection: the rule's figure.
  static let isolationObjects = 10_000

  /// Fills the two stores in `directory` and times `all()` in each `runs` times.
  static func measureIsolation(storeKeys: Int, runs: Int, seed: UInt64, directory: String) throws -> Isolation {
    let objects = isolationObjects
    let options = CaskStore.Options(durability: .never)
    let alone = try CaskStore(path: directory + "/alone", password: ValueCipher.password, options: options)
    defer { try? alone.close() }
    let crowded = try CaskStore(path: directory + "/crowded", password: ValueCipher.password, options: options)
    defer { try? crowded.close() }

    var generator = SeededGenerator(seed: seed)
    let listed = (0..<objects).map { BenchObject.make($0, using: &generator) }
    for start in stride(from: 0, to: objects, by: 1_000) {
      try alone.collection(BenchObject.self).save(contentsOf: listed[start..<Swift.min(objects, start + 1_000)])
    }

    printToStandardError("objects: filling a store of \(Number.grouped(storeKeys)) keys")
    let others = Swift.max(0, storeKeys - objects)
    let fillSeconds = try Stopwatch.seconds {
      try fillCrowded(crowded, listed: listed, others: others, generator: &generator)
    }

    var aloneSeconds: [Double] = []
    var crowdedSeconds: [Double] = []
    for run in 1...Swift.max(1, runs) {
      printToStandardError("objects: all() alone and crowded, run \(run) of \(runs)")
      aloneSeconds.append(try timeAll(alone, expected: objects))
      crowdedSeconds.append(try timeAll(crowded, expected: objects))
    }
    return Isolation(
      objects: objects, storeKeys: objects + others, runs: Swift.max(1, runs), aloneSeconds: aloneSeconds,
      crowdedSeconds: crowdedSeconds, fillSeconds: fillSeconds)
  }

  /// Writes `listed` into the store's `BenchObject` collection and `others` objects into its
  /// `others` collection, interleaved, in batches of 1,000.
  private static func fillCrowded(
    _ store: CaskStore, listed: [BenchObject], others: Int, generator: inout SeededGenerator
  ) throws {
    let collection = store.collection(BenchObject.self)
    let crowd = store.collection(BenchObject.self, named: "others")
    let total = listed.count + others
    var nextListed = 0
    var nextOther = 0
    while nextListed + nextOther < total {
      try store.batch { batch in
        for _ in 0..<1_000 where nextListed + nextOther < total {
          // The listed objects sit at even intervals among the others.
          let listedDue = nextListed < listed.count && (nextListed + nextOther) * listed.count >= nextListed * total
          if listedDue {
            try batch.save(listed[nextListed], in: collection)
            nextListed += 1
          } else {
            try batch.save(BenchObject.make(listed.count + nextOther, using: &generator), in: crowd)
            nextOther += 1
          }
        }
      }
    }
  }

  private static func timeAll(_ store: CaskStore, expected: Int) throws -> Double {
    let collection = store.collection(BenchObject.self)
    let (count, seconds) = try Stopwatch.timed { try collection.all().count }
    guard count == expected else { throw BenchError("all(): \(count) of \(expected) objects") }
    return seconds
  }

  static func isolationTarget(_ isolation: Isolation) -> Target {
    let objects = Number.grouped(isolation.objects)
    let keys = Number.grouped(isolation.storeKeys)
    return Target(
      "all() crowded ÷ alone", at: "\(objects) objects in a \(keys)-key store",
      required: 2, atMost: true, measured: isolation.ratio)
  }
}

import CaskEngine
import CipherCask
import Foundation
import PeerKit

/// `cask-bench profile object-save|object-get|object-all`: the `objects` workload's
/// collection of 10-field `BenchObject`s, one operation kind alone, with the default binary
/// coder or `--coder json`, for perf or callgrind. The collection's own cost is what is
/// profiled: the store is opened with fixed keys (no key derivation) and `.never`.
///
/// ```sh
/// perf record -g -e cpu-clock -o get.data -- cask-bench profile object-get --ops 200000
/// valgrind --tool=callgrind --toggle-collect='*objectLoop*' cask-bench profile object-get --coder json --ops 20000
/// ```
extension ProfileCommand {
  enum ObjectWorkload: String, CaseIterable {
    case save = "object-save"
    case get = "object-get"
    case all = "object-all"
  }

  /// Saves `objects` distinct objects (`object-save`), or builds a collection of them and
  /// reads it `operations` times by random id (`object-get`) or whole (`object-all`, an
  /// operation is one object); prints the microseconds per operation of the timed loop.
  static func profileObjects(
    _ workload: ObjectWorkload, operations: Int, objects objectCount: Int, json: Bool, directory: String,
    control: PerfControl?
  ) throws {
    var random = SeededGenerator(seed: 0x0B1E)
    let count = workload == .save ? operations : objectCount
    let objects = (0..<count).map { BenchObject.make($0, using: &random) }
    let store = try CaskStore(
      path: directory, keys: profileKeys(), options: CaskStore.Options(durability: .never, autoCompaction: nil))
    defer { try? store.close() }
    let collection = store.collection(
      BenchObject.self, coder: json ? JSONCaskCoder() as any CaskCoder : BinaryCaskCoder())
    if workload != .save { try collection.save(contentsOf: objects) }
    let ids = (0..<(workload == .get ? operations : 0)).map { _ in objects[Int.random(in: 0..<count, using: &random)].id
    }
    let rounds = workload == .all ? max(1, operations / count) : 1
    control?.send("enable")
    let start = DispatchTime.now().uptimeNanoseconds
    let checked = try objectLoop(workload, collection: collection, objects: objects, ids: ids, rounds: rounds)
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    control?.send("disable")
    let done = workload == .all ? rounds * count : operations
    print(
      "\(workload.rawValue) (\(json ? "JSONCaskCoder" : "BinaryCaskCoder")): \(Number.grouped(Double(done))) objects "
        + "in \(Number.fixed(seconds, 3)) s, \(Number.fixed(seconds * 1e6 / Double(done), 2)) µs each "
        + "(\(checked) objects checked)")
  }

  /// The timed loop: the only code a `--toggle-collect` on it counts.
  @inline(never)
  static func objectLoop(
    _ workload: ObjectWorkload, collection: CaskCollection<BenchObject>, objects: [BenchObject], ids: [String],
    rounds: Int
  ) throws -> Int {
    var checked = 0
    switch workload {
    case .save:
      for object in objects { try collection.save(object) }
      checked = objects.count
    case .get:
      for id in ids where try collection.get(id: id)?.id == id { checked += 1 }
    case .all:
      for _ in 0..<rounds { checked += try collection.all().count }
    }
    return checked
  }
}

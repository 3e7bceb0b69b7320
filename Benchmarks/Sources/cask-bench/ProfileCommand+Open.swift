import CaskEngine
import CipherCask
import Foundation
import PeerKit
import RNCryptorCodec

/// `cask-bench profile open` and `profile open-events`: opens of a large store from its hints,
/// with the store's own keys (no key derivation: it is not what is profiled), for perf or
/// callgrind. The store is built first, or kept between runs with `--store DIR` (built there
/// when the directory does not exist).
///
/// ```sh
/// cask-bench profile open --keys 1000000 --store /tmp/open-1m
/// perf record -g -e cpu-clock -o open.data -- cask-bench profile open --keys 1000000 --store /tmp/open-1m
/// cask-bench profile open-events --keys 1000000 --store /tmp/events-1m   # 2 indexes: city, date
/// ```
extension ProfileCommand {
  /// The fixed keys the profiled stores are made with.
  static func profileKeys() throws -> RNCryptor.Keys {
    try RNCryptor.Keys(encryptionKey: Data(repeating: 0x11, count: 32), hmacKey: Data(repeating: 0x22, count: 32))
  }

  static let eventIndexes: [CaskIndex<BenchEvent>] = [.index("city", \.city), .index("date", \.date)]

  /// Builds (unless `directory` exists) and opens a store of `count` keys of 16 bytes with
  /// 1 KiB values, `repeats` times; prints each open's seconds.
  static func profileOpen(
    keyCount count: Int, directory: String, repeats: Int, control: PerfControl?, events: Bool
  ) throws {
    let keys = try profileKeys()
    let options = CaskStore.Options(durability: .never, autoCompaction: nil)
    if !FileManager.default.fileExists(atPath: directory) {
      printToStandardError(
        "profile: building \(Number.grouped(Double(count))) \(events ? "events" : "keys") in \(directory)")
      let store = try CaskStore(path: directory, keys: keys, options: options)
      if events {
        let collection = store.collection(BenchEvent.self, named: "events", indexes: eventIndexes)
        var start = 0
        while start < count {
          try collection.save(contentsOf: BenchEvent.sequence(start..<min(count, start + 2_000), seed: 42))
          start += 2_000
        }
      } else {
        var random = SeededGenerator(seed: 0x0BE7)
        let values = EngineCommand.makeValues(count: 64, bytes: 1024, using: &random)
        let names = EngineCommand.makeKeys(count: count, length: 16, using: &random)
        for start in stride(from: 0, to: count, by: EngineCommand.batchSize) {
          try store.batch { batch in
            for index in start..<min(start + EngineCommand.batchSize, count) {
              try batch.put(values[index % values.count], forKey: names[index])
            }
          }
        }
      }
      try store.close()
    }
    for _ in 0..<repeats {
      control?.send("enable")
      let figures = try openLoop(directory, keys: keys, options: options, events: events)
      control?.send("disable")
      print(
        "open: \(Number.fixed(figures.open, 3)) s (CPU \(Number.fixed(figures.openCPU, 3)) s), "
          + "\(Number.grouped(Double(figures.keys))) keys"
          + (events
            ? "; first queries \(Number.fixed(figures.query, 3)) s (CPU \(Number.fixed(figures.queryCPU, 3)) s)" : ""))
    }
  }

  /// The timed part: open (and for events the first queries), then close.
  @inline(never)
  static func openLoop(_ directory: String, keys: RNCryptor.Keys, options: CaskStore.Options, events: Bool) throws
    -> (open: Double, openCPU: Double, query: Double, queryCPU: Double, keys: Int)
  {
    var store: CaskStore?
    let cpuBefore = threadCPUSeconds()
    let open = try Stopwatch.seconds { store = try CaskStore(path: directory, keys: keys, options: options) }
    let cpu = threadCPUSeconds() - cpuBefore
    guard let store else { throw BenchError("no store") }
    defer { try? store.close() }
    var query = 0.0
    var queryCPU = 0.0
    if events {
      let collection = store.collection(BenchEvent.self, named: "events", indexes: eventIndexes)
      let queryCPUBefore = threadCPUSeconds()
      query = try Stopwatch.seconds {
        _ = try collection.query().where(\.city, equals: BenchEvent.cities[3]).count()
        _ = try collection.query().sorted(by: \.date).limit(1).ids()
      }
      queryCPU = threadCPUSeconds() - queryCPUBefore
    }
    return (open, cpu, query, queryCPU, store.count)
  }

  /// CPU time of the calling thread: what an open costs on a machine busy with other work,
  /// where the wall time also counts the time the thread waited for a core.
  static func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}

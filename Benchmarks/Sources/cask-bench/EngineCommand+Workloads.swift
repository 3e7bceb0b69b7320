import CaskEngine
import Dispatch
import Foundation
import PeerKit
import Synchronization

extension EngineCommand {
  /// The options of every store timed with `.never`: no syncs, and no background compaction,
  /// which would otherwise start by itself during the overwrites; new stores of the format
  /// version `--format` chose.
  static var unsynced: CaskStore.Options {
    var options = CaskStore.Options(durability: .never, autoCompaction: nil)
    options.newStoreFormatVersion = formatVersion.load(ordering: .relaxed)
    return options
  }

  /// The format version of the stores this run creates (`--format`): the current one, or an
  /// older one to measure what the newer format costs a put and a get by comparing two runs.
  static let formatVersion = Atomic<UInt16>(CaskFormat.formatVersion)

  /// Puts per batch where a store is only being filled (not timed).
  static let batchSize = 500

  // MARK: Inputs

  /// `count` random keys of `length` ASCII characters (6 random bits each: 96 bits for 16).
  static func makeKeys(count: Int, length: Int, using random: inout SeededGenerator) -> [String] {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    var keys: [String] = []
    keys.reserveCapacity(count)
    var bytes = [UInt8](repeating: 0, count: length)
    for _ in 0..<count {
      var bits: UInt64 = 0
      for index in 0..<length {
        if index % 10 == 0 { bits = random.next() }
        bytes[index] = alphabet[Int(bits & 63)]
        bits >>= 6
      }
      keys.append(String(decoding: bytes, as: UTF8.self))
    }
    return keys
  }

  /// `count` values of `bytes` random bytes.
  static func makeValues(count: Int, bytes: Int, using random: inout SeededGenerator) -> [Data] {
    (0..<count).map { _ in
      var value: [UInt8] = []
      value.reserveCapacity(bytes + 8)
      while value.count < bytes {
        withUnsafeBytes(of: random.next()) { value.append(contentsOf: $0) }
      }
      return Data(value.prefix(bytes))
    }
  }

  // MARK: Timing

  /// Runs `operation(0..<count)`, timing the whole and each call on its own (one clock read
  /// between calls, so the samples add up to the whole). Stops early, with fewer samples than
  /// `count`, once `budget` seconds have passed.
  static func timed(_ count: Int, budget: Double = .infinity, _ operation: (Int) throws -> Void) rethrows -> (
    figure: RunFigure, samples: [Double]
  ) {
    var samples: [Double] = []
    samples.reserveCapacity(count)
    let start = ProcessFigures.now()
    let deadline = budget.isFinite ? start + UInt64(budget * 1e9) : .max
    var previous = start
    for index in 0..<count {
      try operation(index)
      let now = ProcessFigures.now()
      samples.append(Double(now - previous) / 1e9)
      previous = now
      if now > deadline { break }
    }
    return (RunFigure(samples: samples, seconds: Double(previous - start) / 1e9, requested: count), samples)
  }

  // MARK: Put, get, overwrite, delete

  /// One fresh store: put every key, overwrite every key put, delete every key put, each phase
  /// in its own random order and stopped after `budget` seconds.
  static func lifecycleRun(
    keys: [String], values: [Data], directory: String, budget: Double, random: inout SeededGenerator
  ) throws -> LifecycleRun {
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try CaskStore(path: directory, password: password, options: unsynced)
    var order = Array(keys.indices)
    order.shuffle(using: &random)
    let put = try timed(keys.count, budget: budget) {
      try store.put(values[$0 % values.count], forKey: keys[order[$0]])
    }
    let stored = put.samples.count
    guard store.count == stored else { throw BenchError("\(store.count) keys after \(stored) puts of distinct keys") }
    order.removeSubrange(stored...)
    order.shuffle(using: &random)
    let overwrite = try timed(stored, budget: budget) {
      try store.put(values[($0 + 1) % values.count], forKey: keys[order[$0]])
    }
    order.shuffle(using: &random)
    let delete = try timed(stored, budget: budget) { index in
      guard try store.delete(keys[order[index]]) else { throw BenchError("delete did not find a key") }
    }
    guard store.count == stored - delete.samples.count else {
      throw BenchError("\(store.count) keys left after deleting \(delete.samples.count) of \(stored)")
    }
    try store.close()
    return LifecycleRun(put: put.figure, overwrite: overwrite.figure, delete: delete.figure)
  }

  /// Gets of every key of a full store, in random order: the index and the page cache are hot.
  static func getRun(_ store: CaskStore, keys: [String], random: inout SeededGenerator, sink: Sink) throws -> RunFigure
  {
    var order = Array(keys.indices)
    order.shuffle(using: &random)
    return try timed(keys.count) { index in
      guard let value = try store.get(keys[order[index]]) else { throw BenchError("a key that was put is missing") }
      sink.bytes &+= value.count
    }.figure
  }

  /// Gets of every key, in random order, from `readers` threads at once on the same store (each
  /// its share of the keys); the time runs from releasing the threads until the last get.
  static func concurrentGetRun(
    _ store: CaskStore, keys: [String], readers: Int, random: inout SeededGenerator, sink: Sink
  ) throws -> RunFigure {
    var order = Array(keys.indices)
    order.shuffle(using: &random)
    let shuffled = order.map { keys[$0] }
    let figure = try onThreads(readers, keys: shuffled) { key, _ in
      guard let value = try store.get(key), !value.isEmpty else { throw BenchError("a key that was put is missing") }
    }
    sink.bytes &+= figure.operations
    return figure
  }

  /// Runs `operation` on each of `keys` from `threads` threads started together, each taking
  /// its share of the keys in order (with its index in that share), and times every call; the
  /// time runs from the start until the last thread is done.
  static func onThreads(
    _ threads: Int, keys: [String], _ operation: @escaping @Sendable (String, Int) throws -> Void
  ) throws -> RunFigure {
    let share = keys.count / threads
    let (seconds, samples) = try timedOnThreads(threads, perThread: share) { thread, index in
      try operation(keys[thread * share + index], index)
    }
    return RunFigure(samples: samples.map { Double($0) / 1e9 }, seconds: seconds, requested: share * threads)
  }

  // MARK: Durable puts

  /// Puts with `.always` from `writers` threads at once into an empty store, the keys split
  /// between them; the time runs from releasing the threads until the last put returns.
  static func durableRun(writers: Int, keys: [String], values: [Data], directory: String) throws -> RunFigure {
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var options = CaskStore.Options(durability: .always, autoCompaction: nil)
    options.newStoreFormatVersion = formatVersion.load(ordering: .relaxed)
    let store = try CaskStore(path: directory, password: password, options: options)
    let figure = try onThreads(writers, keys: keys) { key, index in
      try store.put(values[index % values.count], forKey: key)
    }
    let share = keys.count / writers
    guard store.count == share * writers else { throw BenchError("durable puts: \(store.count) keys stored") }
    try store.close()
    return figure
  }

  // MARK: Open and memory

  /// Fills a store with every key (batches of `batchSize`) and closes it cleanly, hints written.
  static func build(_ directory: String, keys: [String], values: [Data]) throws {
    let store = try CaskStore(path: directory, password: password, options: unsynced)
    try fill(store, keys: keys[...], values: values)
    guard store.count == keys.count else { throw BenchError("\(store.count) keys after building \(keys.count)") }
    try store.close()
  }

  /// Puts every key into `store` in batches of `batchSize`, the one at `index` with the value
  /// `index + shift` of `values` (cycling).
  static func fill(_ store: CaskStore, keys: ArraySlice<String>, values: [Data], shift: Int = 0) throws {
    for start in stride(from: keys.startIndex, to: keys.endIndex, by: batchSize) {
      try store.batch { batch in
        for index in start..<min(start + batchSize, keys.endIndex) {
          try batch.put(values[(index + shift) % values.count], forKey: keys[index])
        }
      }
    }
  }

  /// Opens the store `repeats` times (closing it cleanly in between), with its hint files or
  /// after deleting them, and measures what each open adds to the process's memory.
  static func measureOpens(_ directory: String, keys: Int, keyBytes: Int, hints: Bool, repeats: Int) throws -> (
    open: OpenFigure, memory: MemoryFigure
  ) {
    var seconds: [Double] = []
    var rss: [Double] = []
    var rssTrimmed: [Double] = []
    var heap: [Double] = []
    var segments = 0
    for _ in 0..<repeats {
      // These figures are open from the hints and open by scanning: the checkpoint the last
      // close wrote would stand in for both (`cask-bench profile open` measures it).
      let checkpoint = "\(directory)/\(CaskFormat.checkpointFileName)"
      if FileManager.default.fileExists(atPath: checkpoint) { try FileManager.default.removeItem(atPath: checkpoint) }
      if !hints {
        for name in try FileManager.default.contentsOfDirectory(atPath: directory)
        where name.hasSuffix("." + CaskFormat.hintExtension) {
          try FileManager.default.removeItem(atPath: "\(directory)/\(name)")
        }
      }
      ProcessMemory.releaseFreeMemory()
      let rssBefore = ProcessFigures.currentRSS()
      let heapBefore = ProcessMemory.heapBytesInUse()
      let start = ProcessFigures.now()
      let store = try CaskStore(path: directory, password: password, options: unsynced)
      seconds.append(ProcessFigures.seconds(since: start))
      rss.append(Double(ProcessFigures.currentRSS() - rssBefore) / Double(keys))
      heap.append(Double(ProcessMemory.heapBytesInUse() - heapBefore) / Double(keys))
      ProcessMemory.releaseFreeMemory()
      rssTrimmed.append(Double(ProcessFigures.currentRSS() - rssBefore) / Double(keys))
      let stats = store.stats()
      segments = stats.segments
      let indexed = hints ? stats.recovery.segmentsFromHints : stats.recovery.segmentsScanned
      guard stats.keys == keys, indexed == stats.segments, stats.recovery.isClean else {
        throw BenchError(
          "open found \(stats.keys) keys, \(stats.recovery.segmentsFromHints) segments from hints and "
            + "\(stats.recovery.segmentsScanned) scanned, of \(stats.segments)")
      }
      try store.close()
    }
    let layout = IndexLayout(keys: keys, keyBytes: keyBytes)
    return (
      OpenFigure(
        keys: keys, keyBytes: keyBytes, hints: hints, medianSeconds: Statistics.median(seconds), seconds: seconds,
        segments: segments),
      MemoryFigure(
        keys: keys, keyBytes: keyBytes, rssBytesPerKey: Statistics.median(rss), rssRuns: rss,
        rssTrimmedBytesPerKey: Statistics.median(rssTrimmed), rssTrimmedRuns: rssTrimmed,
        heapBytesPerKey: Statistics.median(heap), heapRuns: heap, theoreticalBytesPerKey: layout.bytesPerKey,
        tableSlots: layout.slots, slotBytes: layout.slotBytes, keyAllocationBytes: layout.keyAllocationBytes)
    )
  }

  /// The bytes one record of `key` and `value` takes, from a store holding just that record.
  static func recordBytes(_ directory: String, key: String, value: Data) throws -> Int {
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = try CaskStore(path: directory, password: password, options: unsynced)
    try store.put(value, forKey: key)
    try store.close()
    return try segmentBodies(directory).reduce(0, +)
  }

  /// The bytes after the header of each segment file, oldest first.
  static func segmentBodies(_ directory: String) throws -> [Int] {
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
      .filter { $0.hasSuffix("." + CaskFormat.segmentExtension) }.sorted()
    return try names.map { name in
      let size = try FileManager.default.attributesOfItem(atPath: "\(directory)/\(name)")[.size] as? Int ?? 0
      return max(0, size - CaskFormat.segmentHeaderLength)
    }
  }

  // MARK: Compaction

  /// Each run: overwrite half the keys (in batches), compact alone; time `puts` single puts into
  /// the fresh segment; overwrite half again, then compact in another thread while this one
  /// times up to `puts` single puts, also into a fresh segment. No run starts once the
  /// compactions have taken `seconds` in all.
  static func measureCompaction(
    _ directory: String, keys: [String], values: [Data], runs: Int, puts: Int, seconds limit: Double,
    random: inout SeededGenerator
  ) throws -> CompactionFigure {
    let store = try CaskStore(path: directory, password: password, options: unsynced)
    var results: [CompactionRun] = []
    var idle: [Double] = []
    var busy: [Double] = []
    func randomKey(_ random: inout SeededGenerator) -> String {
      keys[Int.random(in: 0..<keys.count, using: &random)]
    }
    var spent = 0.0
    for _ in 0..<runs where spent < limit {
      try overwriteHalf(store, keys: keys, values: values, random: &random)
      let (compacted, seconds) = try Stopwatch.timed { try store.compact() }
      guard let alone = compacted else {
        throw BenchError("compaction found nothing to do after overwriting half the keys")
      }
      idle += try timed(puts) { try store.put(values[$0 % values.count], forKey: randomKey(&random)) }.samples

      try overwriteHalf(store, keys: keys, values: values, random: &random)
      let background = BackgroundCompaction(store)
      var samples: [Double] = []
      samples.reserveCapacity(puts)
      var previous = ProcessFigures.now()
      do {
        while samples.count < puts && !background.isFinished {
          try store.put(values[samples.count % values.count], forKey: randomKey(&random))
          let now = ProcessFigures.now()
          samples.append(Double(now - previous) / 1e9)
          previous = now
        }
      } catch {
        _ = try? background.wait()
        throw error
      }
      let (beside, besideSeconds) = try background.wait()
      spent += seconds + besideSeconds
      busy += samples
      results.append(
        CompactionRun(
          bytesBefore: alone.bytesBefore, bytesAfter: alone.bytesAfter, recordsCopied: alone.recordsCopied,
          seconds: seconds, megabytesPerSecond: Double(alone.bytesBefore) / 1e6 / seconds,
          underPutsBytesBefore: beside.bytesBefore, underPutsSeconds: besideSeconds,
          underPutsMegabytesPerSecond: Double(beside.bytesBefore) / 1e6 / besideSeconds, putsDuring: samples.count))
    }
    guard store.count == keys.count else { throw BenchError("\(store.count) keys after compaction") }
    try store.close()
    return CompactionFigure(
      keys: keys.count, medianSeconds: Statistics.median(results.map(\.seconds)),
      megabytesPerSecond: Statistics.median(results.map(\.megabytesPerSecond)),
      underPutsMegabytesPerSecond: Statistics.median(results.map(\.underPutsMegabytesPerSecond)),
      putsWithout: Latency(samples: idle), putsDuring: Latency(samples: busy), runs: results)
  }

  /// Overwrites a random half of the keys, in batches of `batchSize`.
  static func overwriteHalf(_ store: CaskStore, keys: [String], values: [Data], random: inout SeededGenerator) throws {
    try fill(store, keys: keys.shuffled(using: &random).prefix(keys.count / 2), values: values, shift: 7)
  }

  /// A compaction started on its own thread.
  final class BackgroundCompaction: Sendable {
    private let outcome = Mutex<(result: Result<CompactionReport?, any Error>, seconds: Double)?>(nil)
    private let done = DispatchGroup()

    init(_ store: CaskStore) {
      done.enter()
      let thread = Thread { [self] in
        let start = ProcessFigures.now()
        let result = Result { try store.compact() }
        let seconds = ProcessFigures.seconds(since: start)
        outcome.withLock { $0 = (result, seconds) }
        done.leave()
      }
      thread.start()
    }

    var isFinished: Bool { outcome.withLock { $0 != nil } }

    /// Waits for the compaction; returns its report and how long it took.
    func wait() throws -> (CompactionReport, Double) {
      done.wait()
      guard let (result, seconds) = outcome.withLock({ $0 }) else { throw BenchError("compaction did not finish") }
      guard let report = try result.get() else { throw BenchError("compaction beside puts found nothing to do") }
      return (report, seconds)
    }
  }
}

/// What the index should cost from its layout. CaskEngine's `KeyTable` sizes itself at open
/// for the keys the hints list: `keys × 5/4 + 2` slots (at most 80% full) of 32 bytes each,
/// holding keys of up to 16 UTF-8 bytes inline. A longer key's bytes go into the table's key
/// arena, packed: its own bytes and nothing more (chunk ends aside).
struct IndexLayout {
  let slots: Int
  let slotBytes: Int
  let keyAllocationBytes: Int
  let bytesPerKey: Double

  init(keys: Int, keyBytes: Int) {
    slots = (keys * 5 + 3) / 4 + 1
    slotBytes = 32
    keyAllocationBytes = keyBytes <= 16 ? 0 : keyBytes
    bytesPerKey = Double(slots * slotBytes) / Double(max(keys, 1)) + Double(keyAllocationBytes)
  }
}

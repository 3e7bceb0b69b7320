import Foundation

/// The workloads of `peer-* kv`, with db_bench's names, in the order one run performs them.
public enum KVWorkload {
  public static let fillseq = "fillseq"
  public static let fillrandom = "fillrandom"
  public static let overwrite = "overwrite"
  public static let readrandom = "readrandom"
  public static let readmissing = "readmissing"
  public static let open = "open"
  public static let readwhilewriting = "readwhilewriting"
  public static let compact = "compact"
  public static let deleterandom = "deleterandom"
  /// Durable puts (every put synced) from 1 and from 8 writer threads.
  public static let durable1 = "durable1"
  public static let durable8 = "durable8"

  public static let all = [
    fillseq, fillrandom, overwrite, readrandom, readmissing, open, compact, readwhilewriting, deleterandom,
  ]
  public static let durable = [durable1, durable8]

  /// `readwhilewriting`'s writer's puts a second, the same for every engine: below the slowest
  /// engine's unpaced rate (SQLCipher's), so that every writer keeps it.
  public static let readWhileWritingRate = 1_000
}

/// Runs the key-value workloads against one engine. One run: `fillseq` into a fresh store
/// (then removed); `fillrandom` into a fresh store; `overwrite` (every key once, random order,
/// a put per transaction) and disk usage; `readrandom`; `readmissing`; `open` (plus one get, so
/// lazy work is counted); `compact` and disk usage; `readwhilewriting`; `deleterandom`.
public struct KVRunner {
  let opener: any StoreOpener
  let request: PeerRequest
  let data: WorkloadData
  var recorder: Recorder
  var bytesAfterOverwrite: [Double] = []
  var bytesAfterCompaction: [Double] = []
  var compactionSupported = true
  /// Puts per transaction in `fillseq` and `fillrandom`.
  static let batchSize = 1000
  /// The workloads to record (a store is still filled when a later one needs it), and the gets
  /// `readwhilewriting`'s reader times.
  let workloads: Set<String>
  let readWhileWritingReads: Int

  public init(opener: any StoreOpener, request: PeerRequest) {
    self.opener = opener
    self.request = request
    workloads = Set(request.workloads ?? KVWorkload.all)
    readWhileWritingReads = Swift.min(request.size, 200_000)
    data = WorkloadData(keys: request.size, seed: request.seed)
    recorder = Recorder(capacity: Swift.max(request.size, readWhileWritingReads))
  }

  func wants(_ workload: String) -> Bool {
    workloads.contains(workload)
  }

  public mutating func run(progress: (String) -> Void) throws -> PeerReport {
    let harnessRSS = ProcessFigures.currentRSS()
    for run in 1...Swift.max(1, request.runs) {
      progress("\(opener.name): run \(run) of \(request.runs), \(request.size) keys")
      try runOnce(seed: request.seed &+ UInt64(run) &* 1_000_003, progress: progress)
    }
    var space: SpaceFigures?
    if !bytesAfterOverwrite.isEmpty {
      space = SpaceFigures(
        logicalBytes: request.size * (WorkloadData.keyBytes + WorkloadData.valueBytes),
        bytesAfterOverwrite: Int(Statistics.median(bytesAfterOverwrite)),
        bytesAfterCompaction: Int(
          Statistics.median(bytesAfterCompaction.isEmpty ? bytesAfterOverwrite : bytesAfterCompaction)),
        compactionSupported: compactionSupported, compaction: opener.compaction)
    }
    return PeerReport(
      engine: opener.name, setup: opener.setup, mode: "kv", keys: request.size, durability: request.durability,
      runs: request.runs, workloads: recorder.figures, space: space, peakRSSBytes: ProcessFigures.peakRSS(),
      harnessRSSBytes: harnessRSS)
  }

  /// One run of every selected workload, each on the store the one before it left.
  mutating func runOnce(seed: UInt64, progress: (String) -> Void) throws {
    if wants(KVWorkload.fillseq) { try fillSequential() }
    let later = KVWorkload.all.dropFirst(2)
    guard wants(KVWorkload.fillrandom) || later.contains(where: wants) else { return }
    let directory = try request.freshDirectory("main")
    var store = try opener.open(directory: directory, durability: request.durability)
    var holds = try fillRandom(store, seed: seed)
    if wants(KVWorkload.overwrite) { try overwrite(store, seed: seed &+ 1, holds: &holds, directory: directory) }
    if wants(KVWorkload.readrandom) { try readRandom(store, seed: seed &+ 2, holds: holds) }
    if wants(KVWorkload.readmissing) { try readMissing(store) }
    if wants(KVWorkload.open) { store = try reopen(store, directory: directory, holds: holds) }
    if wants(KVWorkload.compact) { try compact(store, directory: directory) }
    if wants(KVWorkload.readwhilewriting) { try readWhileWriting(store, seed: seed &+ 3, progress: progress) }
    if wants(KVWorkload.deleterandom) { try deleteRandom(store, seed: seed &+ 4) }
    try store.close()
    try FileManager.default.removeItem(atPath: directory)
  }

  var batchNote: String {
    "puts in transactions of \(Self.batchSize); latency is a transaction's time / its puts"
  }

  /// Every key in ascending order into a fresh store, which is then removed.
  mutating func fillSequential() throws {
    let data = data
    let directory = try request.freshDirectory("fillseq")
    let store = try opener.open(directory: directory, durability: request.durability)
    let order = data.sortedIndexes()
    try recorder.timeGroups(
      KVWorkload.fillseq, count: order.count, groupSize: Self.batchSize, note: batchNote
    ) { range in
      try store.write(range.map { (key: data.keys[order[$0]], value: data.value($0)) })
    }
    try store.close()
    try FileManager.default.removeItem(atPath: directory)
  }

  /// Every key in random order into the run's store. Returns the value each key holds, as its
  /// index in `data.values`: reads compare every byte with it, so a wrong value fails the run.
  mutating func fillRandom(_ store: any KeyValueStore, seed: UInt64) throws -> [UInt8] {
    let data = data
    let order = data.shuffledIndexes(seed: seed)
    try recorder.timeGroups(
      KVWorkload.fillrandom, count: order.count, groupSize: Self.batchSize, note: batchNote
    ) { range in
      try store.write(range.map { (key: data.keys[order[$0]], value: data.value($0)) })
    }
    var holds = [UInt8](repeating: 0, count: data.keys.count)
    for (put, key) in order.enumerated() { holds[key] = WorkloadData.poolIndex(put) }
    return holds
  }

  mutating func overwrite(_ store: any KeyValueStore, seed: UInt64, holds: inout [UInt8], directory: String) throws {
    let data = data
    let order = data.shuffledIndexes(seed: seed)
    try recorder.timeEach(KVWorkload.overwrite, count: order.count, note: "one put per transaction") { index in
      try store.put(data.value(index &+ 7), forKey: data.keys[order[index]])
    }
    for (put, key) in order.enumerated() { holds[key] = WorkloadData.poolIndex(put &+ 7) }
    try store.sync()
    bytesAfterOverwrite.append(Double(ProcessFigures.diskBytes(directory)))
  }

  mutating func readRandom(_ store: any KeyValueStore, seed: UInt64, holds: [UInt8]) throws {
    let data = data
    let order = data.shuffledIndexes(seed: seed)
    try recorder.timeEach(KVWorkload.readrandom, count: order.count) { index in
      let key = order[index]
      guard try store.get(data.keys[key]) == data.values[Int(holds[key])] else {
        throw PeerError("readrandom: key \(data.keys[key]) did not read back the value last written to it")
      }
    }
  }

  mutating func readMissing(_ store: any KeyValueStore) throws {
    let missing = data.missingKeys
    try recorder.timeEach(KVWorkload.readmissing, count: missing.count) { index in
      guard try store.get(missing[index]) == nil else {
        throw PeerError("readmissing: a key never written has a value")
      }
    }
  }

  /// Closes the store and opens it again, plus one get; the keys were derived when the store was
  /// made, in this process, so the time is the engine's.
  mutating func reopen(_ store: any KeyValueStore, directory: String, holds: [UInt8]) throws -> any KeyValueStore {
    try store.close()
    let opener = opener
    let durability = request.durability
    let data = data
    let reopened = try recorder.timeOnce(KVWorkload.open, note: "open plus one get, keys derived before") {
      let reopened = try opener.open(directory: directory, durability: durability)
      guard try reopened.get(data.keys[0]) == data.values[Int(holds[0])] else {
        throw PeerError("open: key \(data.keys[0]) did not read back the value last written to it")
      }
      return reopened
    }
    return reopened
  }

  mutating func compact(_ store: any KeyValueStore, directory: String) throws {
    compactionSupported = try recorder.timeOnce(KVWorkload.compact) { try store.compact() }
    try store.sync()
    bytesAfterCompaction.append(Double(ProcessFigures.diskBytes(directory)))
  }

  /// Keys in random order, one delete per transaction; the first thousand checked to be gone.
  mutating func deleteRandom(_ store: any KeyValueStore, seed: UInt64) throws {
    let keys = data.keys
    let order = data.shuffledIndexes(seed: seed)
    try recorder.timeEach(KVWorkload.deleterandom, count: order.count, note: "one delete per transaction") { index in
      try store.delete(keys[order[index]])
    }
    for key in order.prefix(1000) {
      guard try store.get(keys[key]) == nil else {
        throw PeerError("deleterandom: key \(keys[key]) still has a value after its delete")
      }
    }
  }

  /// One thread overwrites random keys at `readWhileWritingRate` puts a second until the reader
  /// (this thread, its own handle) has timed its gets. Only the reader is recorded; the writer's
  /// rate goes to `progress`, with a warning when it fell behind (an easier time for the reader).
  mutating func readWhileWriting(_ store: any KeyValueStore, seed: UInt64, progress: (String) -> Void) throws {
    let data = self.data
    let reader = try store.makeReader()
    let stop = StopFlag()
    let writes = Shared(0)
    let rate = UInt64(KVWorkload.readWhileWritingRate)
    let writer = JoinableThread {
      var generator = SeededGenerator(seed: seed)
      var count: UInt64 = 0
      let start = ProcessFigures.now()
      while !stop.isRaised {
        // Put number `count` is due `count / rate` seconds after the start; a writer that is
        // late catches up without sleeping.
        let due = count * 1_000_000_000 / rate
        let elapsed = ProcessFigures.now() &- start
        if due > elapsed {
          usleep(useconds_t(Swift.min((due - elapsed) / 1_000, 10_000)))
          continue
        }
        try store.put(
          data.value(Int(count)), forKey: data.keys[Int.random(in: 0..<data.keys.count, using: &generator)])
        count += 1
      }
      writes.mutex.withLock { $0 = Int(count) }
    }
    var generator = SeededGenerator(seed: seed &+ 1)
    let reads = readWhileWritingReads
    let order = (0..<reads).map { _ in Int.random(in: 0..<data.keys.count, using: &generator) }
    let note = "the reader's gets, while one thread overwrites random keys at \(rate) puts a second"
    let start = ProcessFigures.now()
    do {
      try recorder.timeEach(KVWorkload.readwhilewriting, count: reads, note: note) { index in
        guard let value = try reader.get(data.keys[order[index]]), value.count == WorkloadData.valueBytes else {
          throw PeerError("readwhilewriting: a written key has no value of \(WorkloadData.valueBytes) bytes")
        }
      }
    } catch {
      stop.raise()
      _ = try? writer.wait()
      throw error
    }
    stop.raise()
    try writer.wait()
    let seconds = ProcessFigures.seconds(since: start)
    let puts = writes.mutex.withLock { $0 }
    if puts == 0 {
      throw PeerError("readwhilewriting: the writer made no put while the reader ran")
    }
    let achieved = Double(puts) / seconds
    progress(
      "\(opener.name): readwhilewriting: the writer made \(puts) puts (\(Int(achieved)) a second, paced at \(rate))"
        + " while the reader ran")
    // The first put is due at once, so a short run's rate reads a little above the pace.
    if achieved < 0.9 * Double(rate) && seconds > 0.5 {
      progress(
        "\(opener.name): readwhilewriting: WARNING: the writer fell behind its pace (\(Int(achieved)) of \(rate) puts"
          + " a second): this engine's reader had less write load than the others'")
    }
  }
}

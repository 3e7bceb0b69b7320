import CaskEngine
import Foundation
import PeerKit
import Synchronization

/// `cask-bench engine`: CaskEngine on stores of 10k, 100k and 1M keys (random 16-byte keys,
/// 1 KiB random values). Per size, with `.never`: put, get (also from 2 threads), overwrite,
/// delete; open with and without hints; the index's memory per key (RSS, heap, the table
/// layout's figure; also with the 15-byte keys of the memory target); compaction after
/// overwriting half the keys, and put latency beside it. Once: durable puts (`.always`) from 1
/// and 8 writers beside the disk's own `fdatasync` rate.
enum EngineCommand: BenchCommand {
  static let name = "engine"
  static let abstract = "CaskEngine put/get/delete/overwrite, durable puts, open, index memory and compaction."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "10,000 keys and fewer durable puts: the whole run in well under a minute, with more noise."),
    ("--keys N", "Measure one store size (at least 100 keys) instead of 10,000, 100,000 and 1,000,000."),
    (
      "--format N",
      "The format version of the stores measured, \(CaskFormat.oldestReadableVersion) to \(CaskFormat.formatVersion) "
        + "(default \(CaskFormat.formatVersion)); a run with an older one beside one with the default gives what "
        + "the newer format costs a put and a get."
    ),
    ("--dir DIR", "Where the temporary stores go (default /tmp); the disk there is the one measured."),
    ResultsDestination.option,
  ]

  static let password = ValueCipher.password
  /// Reader threads of the concurrent get row (no target: it shows whether readers hold each
  /// other up).
  static let concurrentReaders = 2

  static func run(arguments: [String]) throws {
    _ = started
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    let keys = try options.number("--keys", atLeast: 100)
    let format = try options.number(
      "--format", in: Int(CaskFormat.oldestReadableVersion)...Int(CaskFormat.formatVersion))
    if let format { formatVersion.store(UInt16(format), ordering: .relaxed) }
    let sizes = keys.map { [$0] } ?? (quick ? [10_000] : [10_000, 100_000, 1_000_000])
    try options.measure { results, root in
      try write(measure(Settings(quick: quick, sizes: sizes, directory: root), root: root), to: results)
    }
  }

  /// `engine-10000.json` per size and `engine-durable.json`; an older format version names
  /// itself (`engine-format2-10000.json`).
  static func write(_ report: Report, to results: ResultsDestination) throws {
    let format =
      report.settings.formatVersion == CaskFormat.formatVersion ? "" : "format\(report.settings.formatVersion)-"
    for size in report.sizes {
      var one = report
      one.sizes = [size]
      one.durable = []
      one.targets = targets(one)
      try results.write(one, size: size.keys, name: format + String(size.keys))
    }
    var durable = report
    durable.sizes = []
    durable.targets = targets(durable)
    try results.write(durable, name: format + "durable")
  }

  // MARK: Settings

  struct Settings: Codable {
    var quick: Bool
    var sizes: [Int]
    /// Runs behind each median up to `largeSize` keys, and above it (a run writes gigabytes).
    var runs: Int
    var largeRuns = 3
    var largeSize = 200_000
    /// UTF-8 bytes of the keys measured throughout, and of the second memory figure.
    var keyBytes = 16
    var inlineKeyBytes = 15
    var valueBytes = 1024
    /// Distinct random values the puts cycle through (each is encrypted afresh with its own IV).
    var valuePool = 256
    /// Durable puts: the writer-thread counts, the puts of one run for each, and the runs.
    var durableWriters = [1, 8]
    var durableOperations: [Int]
    var durableRuns: Int
    /// Appends of one record, each followed by `fdatasync`, for the disk's own rate.
    var syncProbeWrites: Int
    /// Seconds after which a put, overwrite or delete phase stops, however slow single puts get.
    var phaseBudget: Double
    /// Single puts timed with and without a compaction running, per compaction run.
    var compactionPuts: Int
    /// Compaction is skipped at a size where the previous size's, scaled by the keys, predicts
    /// more seconds than `compactionLimit`; no run starts after `compactionSeconds` in all.
    var compactionLimit: Double
    var compactionSeconds: Double
    /// Where the stores were, and its file system.
    var directory: String
    var fileSystem: String
    var seed = UInt64.random(in: 0...UInt64.max)
    var formatVersion = EngineCommand.formatVersion.load(ordering: .relaxed)

    init(quick: Bool, sizes: [Int], directory: String) {
      (self.quick, self.sizes, self.directory) = (quick, sizes, directory)
      (runs, durableOperations, durableRuns) = quick ? (3, [100, 400], 3) : (5, [1_000, 8_000], 5)
      (syncProbeWrites, phaseBudget, compactionPuts) = quick ? (100, 1, 2_000) : (500, 120, 10_000)
      (compactionLimit, compactionSeconds) = quick ? (30, 10) : (300, 60)
      fileSystem = ScratchDirectory.fileSystemName(of: directory)
    }

    /// Runs behind each median at a store size.
    func runs(for keys: Int) -> Int {
      keys > largeSize ? largeRuns : runs
    }
  }

  // MARK: Targets

  /// The targets each engine file records: put and get rates and index memory at each size,
  /// durable puts from 8 writers, the open of 1,000,000 keys, and `latencyGrowth`.
  static func targets(_ report: Report) -> [Target] {
    let rates = report.sizes.flatMap { size in
      [
        Target(
          "put (.never), \(Number.grouped(size.keys)) keys >= 200,000 ops/s", required: 200_000,
          measured: size.operation("put")?.opsPerSecond),
        Target(
          "get, \(Number.grouped(size.keys)) keys >= 300,000 ops/s", required: 300_000,
          measured: size.operation("get")?.opsPerSecond),
      ]
    }
    let memory = report.sizes.map { size in
      Target(
        "index memory, 15-byte keys, \(Number.grouped(size.keys)) keys <= 64 B/key (RSS)", required: 64,
        atMost: true, measured: size.inlineKeyMemory.rssBytesPerKey)
    }
    let durable = Target(
      "durable puts (.always), 8 writers >= 20,000 ops/s", required: 20_000,
      measured: report.durable.first { $0.writers == 8 }?.opsPerSecond)
    let open = Target(
      "open 1,000,000 keys with hints <= 1 s", required: 1, atMost: true,
      measured: report.sizes.first { $0.keys == 1_000_000 }?.openWithHints.medianSeconds)
    return rates + [durable, open] + memory + [latencyGrowth(report.sizes)]
  }

  /// Get p50 latency at 1,000,000 keys over that at 10,000, from whichever sizes `sizes` hold:
  /// one engine file's, or (in the report) every file's.
  static func latencyGrowth(_ sizes: [SizeFigures], at: String? = nil) -> Target {
    let small = sizes.first { $0.keys == 10_000 }?.operation("get")
    let large = sizes.first { $0.keys == 1_000_000 }?.operation("get")
    var growth: Double?
    if let small, let large, small.p50 > 0 { growth = large.p50 / small.p50 }
    return Target(
      "get p50 latency, 1,000,000 keys / 10,000 keys <= 1.25", at: at, required: 1.25, atMost: true, measured: growth)
  }

  // MARK: Measuring

  static func measure(_ settings: Settings, root: String) throws -> Report {
    progress(Machine.current().summary)
    progress("stores in \(root) (\(settings.fileSystem)), seed \(settings.seed)")
    var random = SeededGenerator(seed: settings.seed)
    let values = makeValues(count: settings.valuePool, bytes: settings.valueBytes, using: &random)
    let sink = Sink()

    let record = try recordBytes(
      "\(root)/record", key: makeKeys(count: 1, length: settings.keyBytes, using: &random)[0], value: values[0])
    let probe = try SyncProbe.measure(directory: root, writes: settings.syncProbeWrites, recordBytes: record)
    progress("fdatasync after a \(record)-byte append: p50 \(Number.microseconds(probe.p50)) µs")
    var durable: [OperationFigure] = []
    let durableKeys = makeKeys(
      count: settings.durableOperations.max() ?? 0, length: settings.keyBytes, using: &random)
    for (writers, operations) in zip(settings.durableWriters, settings.durableOperations) {
      progress(
        "durable puts, \(writers) writer(s), \(operations) puts, \(settings.durableRuns) runs")
      var runs: [RunFigure] = []
      for run in 1...settings.durableRuns {
        runs.append(
          try durableRun(
            writers: writers, keys: Array(durableKeys.prefix(operations)), values: values,
            directory: "\(root)/durable-\(writers)-\(run)"))
      }
      durable.append(
        OperationFigure(
          keys: 0, operation: "durable put", durability: "always", writers: writers, runs: runs))
    }

    var sizes: [SizeFigures] = []
    for keys in settings.sizes {
      sizes.append(
        try measureSize(
          keys, settings: settings, root: root, values: values, previous: sizes.last, random: &random, sink: sink))
    }
    guard sink.bytes > 0 else { throw BenchError("the gets returned no bytes") }
    var report = Report(
      settings: settings, recordBytes: record, syncProbe: probe, durable: durable, sizes: sizes, targets: [])
    report.targets = targets(report)
    return report
  }

  /// Every figure of one store size.
  static func measureSize(
    _ count: Int, settings: Settings, root: String, values: [Data], previous: SizeFigures?,
    random: inout SeededGenerator, sink: Sink
  ) throws -> SizeFigures {
    let runs = settings.runs(for: count)
    let label = "\(Number.grouped(count)) keys"
    progress("\(label): generating keys")
    let keys = makeKeys(count: count, length: settings.keyBytes, using: &random)

    var lifecycles: [LifecycleRun] = []
    for run in 1...runs {
      progress("\(label), run \(run)/\(runs): put, overwrite, delete")
      lifecycles.append(
        try lifecycleRun(
          keys: keys, values: values, directory: "\(root)/life-\(count)-\(run)", budget: settings.phaseBudget,
          random: &random))
    }

    let main = "\(root)/main-\(count)"
    progress("\(label): building a store (batches of 500) for get, open, memory, compaction")
    try build(main, keys: keys, values: values)
    progress("\(label): get, \(runs) runs")
    var gets: [RunFigure] = []
    var concurrentGets: [RunFigure] = []
    do {
      let store = try CaskStore(path: main, password: password, options: unsynced)
      for _ in 1...runs { gets.append(try getRun(store, keys: keys, random: &random, sink: sink)) }
      progress("\(label): get from \(Self.concurrentReaders) threads, \(runs) runs")
      for _ in 1...runs {
        concurrentGets.append(
          try concurrentGetRun(store, keys: keys, readers: Self.concurrentReaders, random: &random, sink: sink))
      }
      try store.close()
    }
    let operations = [
      ("put", 1, lifecycles.map(\.put)), ("get", 1, gets),
      ("get, \(Self.concurrentReaders) threads", Self.concurrentReaders, concurrentGets),
      ("overwrite", 1, lifecycles.map(\.overwrite)), ("delete", 1, lifecycles.map(\.delete)),
    ].map { OperationFigure(keys: count, operation: $0, durability: "never", writers: $1, runs: $2) }
    progress("\(label): open with hints, \(runs) times")
    let withHints = try measureOpens(main, keys: count, keyBytes: settings.keyBytes, hints: true, repeats: runs)
    progress("\(label): open without hints, \(runs) times")
    let withoutHints = try measureOpens(main, keys: count, keyBytes: settings.keyBytes, hints: false, repeats: runs)
    var compaction: CompactionFigure?
    var compactionNote: String?
    var reference = previous?.compaction.map { (keys: $0.keys, seconds: $0.medianSeconds) }
    if reference == nil && count > calibrationKeys {
      progress("\(label): timing one compaction of \(Number.grouped(calibrationKeys)) keys first")
      reference = try compactionReference(root: root, settings: settings, values: values, random: &random)
    }
    if let reference {
      let predicted = reference.seconds * Double(count) / Double(reference.keys)
      if predicted > settings.compactionLimit {
        compactionNote =
          "skipped: compaction took \(Number.fixed(reference.seconds, 1)) s at "
          + "\(Number.grouped(reference.keys)) keys, so at least \(Number.grouped(predicted)) s here"
      }
    }
    if let compactionNote {
      progress("\(label): compaction \(compactionNote)")
    } else {
      progress("\(label): compaction, up to \(runs) runs")
      compaction = try measureCompaction(
        main, keys: keys, values: values, runs: runs, puts: min(settings.compactionPuts, count / 2),
        seconds: settings.compactionSeconds, random: &random)
    }
    try FileManager.default.removeItem(atPath: main)

    progress("\(label): \(settings.inlineKeyBytes)-byte keys, open and memory")
    let inline = "\(root)/inline-\(count)"
    let inlineKeys = makeKeys(count: count, length: settings.inlineKeyBytes, using: &random)
    try build(inline, keys: inlineKeys, values: values)
    let inlineOpens = try measureOpens(
      inline, keys: count, keyBytes: settings.inlineKeyBytes, hints: true, repeats: runs)
    try FileManager.default.removeItem(atPath: inline)

    return SizeFigures(
      keys: count, runs: runs, operations: operations, openWithHints: withHints.open,
      openWithoutHints: withoutHints.open, keyMemory: withHints.memory, inlineKeyOpen: inlineOpens.open,
      inlineKeyMemory: inlineOpens.memory, compaction: compaction, compactionNote: compactionNote)
  }

  /// A run of one size measures compaction only if a compaction of this many keys, scaled up,
  /// predicts it will finish within `compactionLimit`.
  static let calibrationKeys = 10_000

  /// The seconds of one compaction of `calibrationKeys` keys after overwriting half of them.
  static func compactionReference(root: String, settings: Settings, values: [Data], random: inout SeededGenerator)
    throws -> (keys: Int, seconds: Double)
  {
    let directory = "\(root)/calibration"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let keys = makeKeys(count: calibrationKeys, length: settings.keyBytes, using: &random)
    try build(directory, keys: keys, values: values)
    let store = try CaskStore(path: directory, password: password, options: unsynced)
    try overwriteHalf(store, keys: keys, values: values, random: &random)
    let seconds = try Stopwatch.seconds { _ = try store.compact() }
    try store.close()
    return (calibrationKeys, seconds)
  }

  /// Progress on standard error, with the seconds since the run started.
  static func progress(_ message: String) {
    printToStandardError("engine [\(Number.fixed(ProcessFigures.seconds(since: started), 1)) s]: \(message)")
  }

  static let started = ProcessFigures.now()
}

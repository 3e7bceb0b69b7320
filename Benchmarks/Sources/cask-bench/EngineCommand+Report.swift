import Foundation

extension EngineCommand {
  // MARK: Figures

  /// One timed run of `operations` operations, each also timed on its own.
  struct RunFigure: Codable {
    /// Operations done, and asked for: fewer were done when the phase ran out of time.
    let operations: Int
    let requested: Int
    let seconds: Double
    let opsPerSecond: Double
    /// Latency of single operations, in seconds.
    let p50: Double
    let p99: Double
    /// The slowest single operation (a put that sealed a segment, say), in seconds.
    let max: Double

    init(samples: [Double], seconds: Double, requested: Int) {
      operations = samples.count
      self.requested = requested
      self.seconds = seconds
      opsPerSecond = seconds > 0 ? Double(samples.count) / seconds : 0
      let sorted = samples.sorted()
      p50 = Statistics.percentile(sorted, 50)
      p99 = Statistics.percentile(sorted, 99)
      max = sorted.last ?? 0
    }
  }

  /// An operation's runs and their medians.
  struct OperationFigure: Encodable {
    /// Keys in the store (0 for durable puts, which start from an empty store).
    let keys: Int
    let operation: String
    let durability: String
    let writers: Int
    /// Medians over the runs.
    let opsPerSecond: Double
    let p50: Double
    let p99: Double
    /// The median over the runs of each run's slowest operation.
    let max: Double
    /// The fewest operations a run did, and what each was asked for.
    let fewestOperations: Int
    let requested: Int
    let runs: [RunFigure]

    init(keys: Int, operation: String, durability: String, writers: Int, runs: [RunFigure]) {
      self.keys = keys
      self.operation = operation
      self.durability = durability
      self.writers = writers
      self.runs = runs
      opsPerSecond = Statistics.median(runs.map(\.opsPerSecond))
      p50 = Statistics.median(runs.map(\.p50))
      p99 = Statistics.median(runs.map(\.p99))
      max = Statistics.median(runs.map(\.max))
      fewestOperations = runs.map(\.operations).min() ?? 0
      requested = runs.map(\.requested).max() ?? 0
    }

    /// Whether some run stopped before doing every operation.
    var stoppedEarly: Bool { fewestOperations < requested }
  }

  /// The three timed phases of one fresh store.
  struct LifecycleRun {
    let put: RunFigure
    let overwrite: RunFigure
    let delete: RunFigure
  }

  struct OpenFigure: Encodable {
    let keys: Int
    let keyBytes: Int
    let hints: Bool
    let medianSeconds: Double
    let seconds: [Double]
    /// Segment files the store had.
    let segments: Int
  }

  /// What the index costs per key once a store is open.
  struct MemoryFigure: Encodable {
    let keys: Int
    let keyBytes: Int
    /// Growth of the resident set across open, per key (median over the opens), freed memory having
    /// been returned to the system (`malloc_trim`) before.
    let rssBytesPerKey: Double
    let rssRuns: [Double]
    /// The same once freed memory has been returned again after open: what open keeps, without
    /// the buffers it used and freed (hint files, decrypted payloads, entry arrays).
    let rssTrimmedBytesPerKey: Double
    let rssTrimmedRuns: [Double]
    /// Growth of the heap in use (`mallinfo2`: arenas plus mmap'd blocks) across open, per key.
    let heapBytesPerKey: Double
    let heapRuns: [Double]
    /// What the layout gives (`IndexLayout`): `slots × 32 / keys`, plus the key's own
    /// allocation when it is too long to be stored inline (over 16 UTF-8 bytes).
    let theoreticalBytesPerKey: Double
    let tableSlots: Int
    let slotBytes: Int
    let keyAllocationBytes: Int
  }

  /// Single-put latencies pooled over the runs.
  struct LatencyFigure: Encodable {
    let count: Int
    let p50: Double
    let p99: Double

    init(samples: [Double]) {
      count = samples.count
      let sorted = samples.sorted()
      p50 = Statistics.percentile(sorted, 50)
      p99 = Statistics.percentile(sorted, 99)
    }
  }

  struct CompactionRun: Encodable {
    /// Compaction alone, after overwriting half the keys.
    let bytesBefore: UInt64
    let bytesAfter: UInt64
    let recordsCopied: Int
    let seconds: Double
    /// Megabytes (10^6 bytes) of segments compacted a second: `bytesBefore / seconds`.
    let megabytesPerSecond: Double
    /// The same, with puts running beside it on the main thread.
    let underPutsBytesBefore: UInt64
    let underPutsSeconds: Double
    let underPutsMegabytesPerSecond: Double
    let putsDuring: Int
  }

  struct CompactionFigure: Encodable {
    let keys: Int
    /// Medians over the runs.
    let medianSeconds: Double
    let megabytesPerSecond: Double
    let underPutsMegabytesPerSecond: Double
    /// Overwrites of half the keys, just before the compaction that runs beside puts.
    let putsWithout: LatencyFigure
    /// Overwrites of random keys while that compaction runs.
    let putsDuring: LatencyFigure
    let runs: [CompactionRun]
  }

  struct SizeFigures: Encodable {
    let keys: Int
    let runs: Int
    let operations: [OperationFigure]
    let openWithHints: OpenFigure
    let openWithoutHints: OpenFigure
    let keyMemory: MemoryFigure
    let inlineKeyOpen: OpenFigure
    let inlineKeyMemory: MemoryFigure
    /// `nil` when skipped, with the reason in `compactionNote`.
    let compaction: CompactionFigure?
    let compactionNote: String?

    func operation(_ name: String) -> OperationFigure? {
      operations.first { $0.operation == name }
    }
  }

  struct Report: Encodable {
    let command: String
    let settings: Settings
    let machine: Machine
    /// /proc/loadavg when the run started and when it ended: the machine is shared.
    let loadAverage: [String]
    /// The bytes of one record with a key of `settings.keyBytes` and a value of `settings.valueBytes`.
    let recordBytes: Int
    /// The disk's own rate: one record appended and `fdatasync`ed at a time.
    let syncProbe: RunFigure
    var durable: [OperationFigure]
    var sizes: [SizeFigures]
    var targets: [Target]
  }

  // MARK: Printing

  static func verdict(_ met: Bool?) -> String {
    met.map { $0 ? "met" : "MISSED" } ?? "not measured"
  }

  static func rate(_ value: Double, atLeast goal: Double) -> String {
    "≥ \(Number.grouped(goal)): \(verdict(value >= goal))"
  }

  /// What the run prints: how it ran, then a table per part, each after what it measures.
  static func render(_ report: Report) -> String {
    let settings = report.settings
    let probe = report.syncProbe
    let usec = Number.microseconds
    let (compaction, skipped) = compactionTable(report)
    return """
      \(report.command): \(report.machine.summary)
      Load average (1, 5, 15 min) at the start: \(report.loadAverage.first ?? "n/a"); at the end: \
      \(report.loadAverage.last ?? "n/a").
      Stores in \(settings.directory) (\(settings.fileSystem)); \(settings.keyBytes)-byte random keys, \
      \(settings.valueBytes)-byte random values, durability .never, auto-compaction off. ops/s and latencies are \
      medians of the runs (\(settings.runs) up to \(Number.grouped(Double(settings.largeSize))) keys, \
      \(settings.largeRuns) above); p50/p99 are single operations timed one by one, max the slowest of a run \
      (median over the runs). put, overwrite and delete: a fresh store per run, each phase stopped after \
      \(Number.fixed(settings.phaseBudget, 0)) s ("time up"); get: every key of a full store (built in batches of \(batchSize)) in random order.

      \(operationsTable(report).render())

      Durable puts (.always) into an empty store; \(Number.grouped(Double(probe.operations))) single-record appends \
      with fdatasync took p50 \(usec(probe.p50)) µs, p99 \(usec(probe.p99)) µs: a writer waits for a sync per \
      put, so one writer does about \(Number.grouped(1 / max(probe.p50, 1e-9))) durable puts a second and n writers, sharing \
      each sync, at most n times that.

      \(durableTable(report).render())

      Open (password: two PBKDF2 runs included) with warm page cache; memory is the growth across open per key: \
      resident set (/proc/self/statm; freed memory returned with malloc_trim before open), the same after \
      returning what open freed ("trimmed"), heap in use (mallinfo2), and the layout's figure (the index \
      table's 32-byte slots, plus the key's own allocation over 16 bytes). The target is judged on the untrimmed RSS.

      \(opensTable(report).render())

      Compaction after overwriting half the keys; MB = 10^6 bytes of segments compacted; put latencies are \
      \(Number.grouped(Double(settings.compactionPuts))) single puts (at most) per run into a fresh segment.

      \(compaction.render())
      \(skipped.map { "\n" + $0 + "\n" }.joined())
      \(targetsTable(report).render())
      """
  }

  static func operationsTable(_ report: Report) -> Table {
    var operations = Table([
      ("keys", .right), ("operation", .left), ("runs", .right), ("ops done", .right), ("ops/s", .right),
      ("p50 µs", .right), ("p99 µs", .right), ("max ms", .right), ("target ops/s", .left),
    ])
    for size in report.sizes {
      for figure in size.operations {
        var target = ""
        if figure.operation == "put" { target = rate(figure.opsPerSecond, atLeast: Goal.putOpsPerSecond) }
        if figure.operation == "get" { target = rate(figure.opsPerSecond, atLeast: Goal.getOpsPerSecond) }
        let done =
          figure.stoppedEarly
          ? "≥ \(Number.grouped(Double(figure.fewestOperations))) (time up)" : Number.grouped(Double(figure.requested))
        operations.append([
          Number.grouped(Double(size.keys)), figure.operation, "\(figure.runs.count)", done,
          Number.grouped(figure.opsPerSecond), Number.microseconds(figure.p50), Number.microseconds(figure.p99),
          Number.fixed(figure.max * 1e3, 2), target,
        ])
      }
    }
    return operations
  }

  static func durableTable(_ report: Report) -> Table {
    var durable = Table([
      ("writers", .right), ("puts/run", .right), ("runs", .right), ("ops/s", .right), ("p50 µs", .right),
      ("p99 µs", .right), ("writers ÷ sync p50", .right), ("target ops/s", .left),
    ])
    for figure in report.durable {
      // Each writer has one put in flight, so one sync covers at most `writers` puts.
      let bound = report.syncProbe.p50 > 0 ? Double(figure.writers) / report.syncProbe.p50 : 0
      durable.append([
        "\(figure.writers)", "\(figure.runs.first?.operations ?? 0)", "\(figure.runs.count)",
        Number.grouped(figure.opsPerSecond), Number.microseconds(figure.p50), Number.microseconds(figure.p99),
        Number.grouped(bound),
        figure.writers == Goal.durableWriters ? rate(figure.opsPerSecond, atLeast: Goal.durableOpsPerSecond) : "",
      ])
    }
    return durable
  }

  static func opensTable(_ report: Report) -> Table {
    var opens = Table([
      ("keys", .right), ("key bytes", .right), ("segments", .right), ("open, hints s", .right),
      ("open, no hints s", .right), ("RSS B/key", .right), ("RSS trimmed", .right), ("heap B/key", .right),
      ("layout B/key", .right),
      ("target", .left),
    ])
    for size in report.sizes {
      let openTarget =
        size.keys == Goal.openKeys
        ? "open ≤ 1 s: \(verdict(size.openWithHints.medianSeconds <= Goal.openSeconds))" : ""
      opens.append(
        openRow(size.keys, open: size.openWithHints, without: size.openWithoutHints, memory: size.keyMemory)
          + [openTarget])
      let memory = size.inlineKeyMemory
      opens.append(
        openRow(size.keys, open: size.inlineKeyOpen, without: nil, memory: memory)
          + ["≤ 64 B/key: \(verdict(memory.rssBytesPerKey <= Goal.indexBytesPerKey))"])
    }
    return opens
  }

  /// The compaction table, and a line for each size whose compaction was skipped.
  static func compactionTable(_ report: Report) -> (Table, [String]) {
    func megabytes(_ value: Double) -> String { Number.fixed(value, value < 10 ? 2 : 0) }
    let usec = Number.microseconds
    var compaction = Table([
      ("keys", .right), ("runs", .right), ("MB in", .right), ("MB out", .right), ("MB/s alone", .right),
      ("MB/s beside puts", .right), ("put p50/p99 µs, idle", .right), ("put p50/p99 µs, compacting", .right),
    ])
    var skipped: [String] = []
    for size in report.sizes {
      guard let figure = size.compaction else {
        skipped.append("\(Number.grouped(Double(size.keys))) keys: \(size.compactionNote ?? "skipped").")
        continue
      }
      let first = figure.runs.first
      compaction.append([
        Number.grouped(Double(size.keys)), "\(figure.runs.count)",
        Number.fixed(Double(first?.bytesBefore ?? 0) / 1e6, 0), Number.fixed(Double(first?.bytesAfter ?? 0) / 1e6, 0),
        megabytes(figure.megabytesPerSecond), megabytes(figure.underPutsMegabytesPerSecond),
        "\(usec(figure.putsWithout.p50)) / \(usec(figure.putsWithout.p99))",
        "\(usec(figure.putsDuring.p50)) / \(usec(figure.putsDuring.p99))",
      ])
    }
    return (compaction, skipped)
  }

  static func targetsTable(_ report: Report) -> Table {
    var targets = Table([("target", .left), ("measured", .right), ("met", .left)])
    for target in report.targets {
      let measured = target.measured.map { $0 < 10 ? Number.fixed($0, 2) : Number.grouped($0) }
      targets.append([target.target, measured ?? "n/a", verdict(target.met)])
    }
    return targets
  }

  static func openRow(_ keys: Int, open: OpenFigure, without: OpenFigure?, memory: MemoryFigure) -> [String] {
    [
      Number.grouped(Double(keys)), "\(open.keyBytes)", "\(open.segments)", Number.fixed(open.medianSeconds, 3),
      without.map { Number.fixed($0.medianSeconds, 3) } ?? "", Number.fixed(memory.rssBytesPerKey, 1),
      Number.fixed(memory.rssTrimmedBytesPerKey, 1), Number.fixed(memory.heapBytesPerKey, 1),
      Number.fixed(memory.theoreticalBytesPerKey, 1),
    ]
  }
}

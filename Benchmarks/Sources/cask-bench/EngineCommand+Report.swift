import Foundation
import PeerKit

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
  struct OperationFigure: Codable {
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
  }

  /// The three timed phases of one fresh store.
  struct LifecycleRun {
    let put: RunFigure
    let overwrite: RunFigure
    let delete: RunFigure
  }

  struct OpenFigure: Codable {
    let keys: Int
    let keyBytes: Int
    let hints: Bool
    let medianSeconds: Double
    let seconds: [Double]
    /// Segment files the store had.
    let segments: Int
  }

  /// What the index costs per key once a store is open.
  struct MemoryFigure: Codable {
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

  struct CompactionRun: Codable {
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

  struct CompactionFigure: Codable {
    let keys: Int
    /// Medians over the runs.
    let medianSeconds: Double
    let megabytesPerSecond: Double
    let underPutsMegabytesPerSecond: Double
    /// Overwrites of half the keys, just before the compaction that runs beside puts.
    let putsWithout: Latency
    /// Overwrites of random keys while that compaction runs.
    let putsDuring: Latency
    let runs: [CompactionRun]
  }

  struct SizeFigures: Codable {
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

  struct Report: Codable {
    let settings: Settings
    /// The bytes of one record with a key of `settings.keyBytes` and a value of `settings.valueBytes`.
    let recordBytes: Int
    /// The disk's own rate: one record appended and `fdatasync`ed at a time.
    let syncProbe: RunFigure
    var durable: [OperationFigure]
    var sizes: [SizeFigures]
    var targets: [Target]
  }
}

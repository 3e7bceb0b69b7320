import Foundation

/// What one peer process prints: the figures of one engine for one mode and store size.
/// `cask-bench` decodes it, so the two sides share this type.
public struct PeerReport: Codable, Sendable {
  /// The comparison row, for example `lmdb+rncryptor`.
  public var engine: String
  /// How the engine was set up (settings, transactions, encryption).
  public var setup: String
  /// `kv`, `durable` or `objects`.
  public var mode: String
  /// Keys (or objects) in the store.
  public var keys: Int
  public var durability: Durability
  /// Runs behind each median.
  public var runs: Int
  public var workloads: [WorkloadFigures]
  /// Disk usage, for `kv` runs that measured it.
  public var space: SpaceFigures?
  /// The process's peak resident set, and its resident set just before the first store was
  /// opened (the keys, values and timing buffers of the harness), in bytes.
  public var peakRSSBytes: Int
  public var harnessRSSBytes: Int
  /// For `queries` runs: each query's answer (ids, a count), compared across engines.
  public var answers: [String: String]?

  public init(
    engine: String, setup: String, mode: String, keys: Int, durability: Durability, runs: Int,
    workloads: [WorkloadFigures] = [], space: SpaceFigures? = nil, peakRSSBytes: Int = 0, harnessRSSBytes: Int = 0
  ) {
    self.engine = engine
    self.setup = setup
    self.mode = mode
    self.keys = keys
    self.durability = durability
    self.runs = runs
    self.workloads = workloads
    self.space = space
    self.peakRSSBytes = peakRSSBytes
    self.harnessRSSBytes = harnessRSSBytes
  }
}

/// One workload's runs.
public struct WorkloadFigures: Codable, Sendable {
  /// db_bench's name where one fits (`fillrandom`, `readrandom`, ...).
  public var name: String
  /// Operations in each run.
  public var operations: Int
  /// Wall-clock seconds of each run.
  public var seconds: [Double]
  /// Median over the runs of each run's p50 and p99 latency of one operation, in seconds.
  public var p50: Double
  public var p99: Double
  /// What an operation is, when it is not obvious (a batch's share, a reader's get).
  public var note: String?
}

/// Disk usage of the store a `kv` run filled and overwrote, medians over the runs.
public struct SpaceFigures: Codable, Sendable {
  /// What the data is: keys × (16 + 1024) bytes.
  public var logicalBytes: Int
  /// Bytes allocated on disk after `overwrite` (every key written twice).
  public var bytesAfterOverwrite: Int
  /// Bytes allocated after the engine's own compaction; the same as after overwrite for an
  /// engine without one.
  public var bytesAfterCompaction: Int
  /// Whether the engine has a compaction to run (LMDB does not).
  public var compactionSupported: Bool
  /// What the compaction was (`compact()`, `VACUUM`, `CompactRange`, none).
  public var compaction: String
}

/// The statistics every figure of a peer and of `cask-bench` is made with.
public enum Statistics {
  /// The median; the mean of the two middle values for an even count; 0 for none.
  public static func median(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
  }

  /// The nearest-rank percentile: the smallest value with at least `percent`% of the values at
  /// or below it (p50, p99); 0 for none.
  public static func percentile(_ values: [Double], _ percent: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[rank(percent, of: sorted.count)]
  }

  /// `percentile` of nanosecond samples, in seconds; sorts `samples` in place.
  public static func percentiles(_ samples: inout [UInt64], _ percents: [Double]) -> [Double] {
    samples.sort()
    return percents.map { samples.isEmpty ? 0 : Double(samples[rank($0, of: samples.count)]) / 1e9 }
  }

  static func rank(_ percent: Double, of count: Int) -> Int {
    Swift.min(Swift.max(Int((percent / 100 * Double(count)).rounded(.up)), 1), count) - 1
  }
}

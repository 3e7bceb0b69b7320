import Foundation

/// SplitMix64: a small, fast generator whose whole sequence follows from its seed, so every
/// engine in a comparison sees the same keys, values and orders.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  public init(seed: UInt64) {
    state = seed
  }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// The keys, values and orders of one workload run, all derived from one seed.
public struct WorkloadData: Sendable {
  /// Distinct 16-byte keys: 8 random bytes as 16 lowercase hex digits.
  public let keys: [String]
  /// Keys of the same shape that are not in `keys`, for `readmissing`.
  public let missingKeys: [String]
  /// Distinct random values that puts cycle through (each put of an encrypting engine still
  /// encrypts afresh, with a new IV).
  public let values: [Data]

  public static let keyBytes = 16
  public static let valueBytes = 1024
  public static let valuePool = 256

  public init(keys count: Int, seed: UInt64) {
    var generator = SeededGenerator(seed: seed)
    var seen = Set<String>(minimumCapacity: count * 2)
    var keys: [String] = []
    keys.reserveCapacity(count)
    while keys.count < count {
      let key = Self.hexKey(generator.next())
      if seen.insert(key).inserted { keys.append(key) }
    }
    var missing: [String] = []
    missing.reserveCapacity(count)
    while missing.count < count {
      let key = Self.hexKey(generator.next())
      if !seen.contains(key) { missing.append(key) }
    }
    self.keys = keys
    self.missingKeys = missing
    values = (0..<Self.valuePool).map { _ in
      Data((0..<Self.valueBytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
  }

  static func hexKey(_ bits: UInt64) -> String {
    let digits = String(bits, radix: 16)
    return String(repeating: "0", count: keyBytes - digits.count) + digits
  }

  /// The value of the `index`th put.
  public func value(_ index: Int) -> Data {
    values[Int(Self.poolIndex(index))]
  }

  /// Where in `values` the `index`th put's value is (the pool has at most 256 values).
  public static func poolIndex(_ index: Int) -> UInt8 {
    UInt8(index % valuePool)
  }

  /// The indexes `0..<keys.count` shuffled by a generator seeded with `seed`.
  public func shuffledIndexes(seed: UInt64) -> [Int] {
    var generator = SeededGenerator(seed: seed)
    return Array(0..<keys.count).shuffled(using: &generator)
  }

  /// The indexes of `keys` in ascending key order (db_bench's `fillseq`).
  public func sortedIndexes() -> [Int] {
    keys.indices.sorted { keys[$0] < keys[$1] }
  }
}

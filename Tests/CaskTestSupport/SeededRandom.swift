import Foundation

/// A deterministic random generator for property tests (SplitMix64).
///
/// Every property test makes one with `SeededRandom.make(test:)`, which prints the seed. Set
/// `CASK_TEST_SEED` to replay a failure, `CASK_TEST_ITERATIONS` to make the tests longer.
public struct SeededRandom: RandomNumberGenerator, Sendable {
  public let seed: UInt64
  private var state: UInt64

  public init(seed: UInt64) {
    self.seed = seed
    self.state = seed
  }

  /// A generator seeded from `CASK_TEST_SEED`, or from the clock; prints the seed.
  public static func make(test name: String) -> SeededRandom {
    let environment = ProcessInfo.processInfo.environment
    let seed = environment["CASK_TEST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
    print("[\(name)] seed \(seed) (replay with CASK_TEST_SEED=\(seed))")
    return SeededRandom(seed: seed)
  }

  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// `count` random bytes.
  public mutating func bytes(_ count: Int) -> Data {
    var data = Data(count: count)
    data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
      var index = 0
      while index < count {
        var word = next()
        for _ in 0..<Swift.min(8, count - index) {
          buffer[index] = UInt8(truncatingIfNeeded: word)
          word >>= 8
          index += 1
        }
      }
    }
    return data
  }
}

/// How many iterations a property test runs: `base` times `CASK_TEST_ITERATIONS` (default 1).
public func testIterations(_ base: Int) -> Int {
  let scale = ProcessInfo.processInfo.environment["CASK_TEST_ITERATIONS"].flatMap { Int($0) } ?? 1
  return Swift.max(1, base * Swift.max(1, scale))
}

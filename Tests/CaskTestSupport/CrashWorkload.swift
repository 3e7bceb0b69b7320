import Foundation

/// The seeded stream of writes that `cask-crash-writer` performs and the crash test replays.
///
/// Both sides build the same stream from `(seed, run)`, so the checker knows every operation
/// the writer attempted, including the one in flight when it was killed. Every value is
/// derived from its key, run and operation index (`value(key:run:index:)`), so a value read
/// back can only match if it is exactly one that was written.
public struct CrashWorkload: Sendable {
  /// One step of a batch.
  public enum BatchStep: Sendable, Equatable {
    case put(key: String, value: Data)
    case delete(key: String)
  }

  /// One call the writer makes on the store.
  public enum Operation: Sendable, Equatable {
    case put(key: String, value: Data)
    case delete(key: String)
    case batch([BatchStep])
    /// `compact()`: changes no contents, but a kill can land in the middle of it.
    case compact
  }

  /// Keys are drawn from this many names, so overwrites and deletes are frequent.
  public static let keyCount = 48

  public let run: Int
  /// Index of the operation `next()` returns.
  public private(set) var index = 0
  private var random: SeededRandom

  public init(seed: UInt64, run: Int) {
    self.run = run
    self.random = SeededRandom(seed: Self.mix(seed, UInt64(run) &+ 1))
  }

  /// The next operation of the stream.
  public mutating func next() -> Operation {
    defer { index += 1 }
    let roll = random.next() % 100
    switch roll {
    case 0..<48:
      let key = randomKey()
      return .put(key: key, value: Self.value(key: key, run: run, index: index, step: 0))
    case 48..<68:
      return .delete(key: randomKey())
    case 68..<98:
      let size = Int(random.next() % 6) + 2
      var steps: [BatchStep] = []
      for _ in 0..<size {
        let key = randomKey()
        if random.next() % 4 == 0 {
          steps.append(.delete(key: key))
        } else {
          steps.append(.put(key: key, value: Self.value(key: key, run: run, index: index, step: steps.count + 1)))
        }
      }
      return .batch(steps)
    default:
      return .compact
    }
  }

  /// The contents of a store after `operation`, starting from `model`.
  public static func apply(_ operation: Operation, to model: inout [String: Data]) {
    switch operation {
    case .put(let key, let value):
      model[key] = value
    case .delete(let key):
      model[key] = nil
    case .batch(let steps):
      for step in steps {
        switch step {
        case .put(let key, let value): model[key] = value
        case .delete(let key): model[key] = nil
        }
      }
    case .compact:
      break
    }
  }

  /// The value written under `key` by step `step` (0 for a single put, 1... inside a batch) of
  /// operation `index` of run `run`: a readable prefix naming all four, then 0 to about 2 KiB
  /// of bytes that depend on them.
  public static func value(key: String, run: Int, index: Int, step: Int) -> Data {
    let hash = mix(fnv1a(key), mix(UInt64(run), UInt64(index) << 8 | UInt64(step)))
    let length = hash % 5 == 0 ? Int(200 + hash % 1_800) : Int(hash % 160)
    var generator = SeededRandom(seed: hash)
    var data = Data("\(run).\(index).\(step).\(key)|".utf8)
    data.append(generator.bytes(length))
    return data
  }

  private mutating func randomKey() -> String {
    "key-\(random.next() % UInt64(Self.keyCount))"
  }

  private static func fnv1a(_ string: String) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in string.utf8 {
      hash ^= UInt64(byte)
      hash &*= 0x100_0000_01B3
    }
    return hash
  }

  /// A stable 64-bit mix of two numbers (not `Hasher`, which is seeded per process).
  private static func mix(_ first: UInt64, _ second: UInt64) -> UInt64 {
    var generator = SeededRandom(seed: first ^ (second &* 0x9E37_79B9_7F4A_7C15))
    return generator.next()
  }
}

/// The lines `cask-crash-writer` prints, one per line on stdout.
public enum CrashWriterLine {
  /// Printed once the store is open.
  public static let opened = "opened"

  /// Printed after operation `index` returned: it is acknowledged, so it must survive.
  public static func acknowledged(_ index: Int) -> String { "ack \(index)" }

  /// The index of an acknowledgement line, or `nil` for any other line.
  public static func acknowledgedIndex(_ line: Substring) -> Int? {
    guard line.hasPrefix("ack ") else { return nil }
    return Int(line.dropFirst(4))
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The rules by which a crash keeps, loses or tears the operations a workload made: which
/// operations are durable at a crash point, and which combinations of the rest a crash can
/// leave. Docs/RELIABILITY.md ("Crash states") states each model and its bounds.
public enum CrashPersistenceModel: String, Sendable, CaseIterable, CustomStringConvertible {
  /// What POSIX promises and no more: a file's writes and truncations are durable once an
  /// `fsync` of that file returns, a directory's entries (creations, renames, swaps, removals)
  /// once an `fsync` of that directory returns. Until then each may be lost or kept,
  /// independently of every other and in any order; a write may tear at 512-byte sectors.
  case posixMinimum = "POSIX minimum"
  /// ext4 with `data=ordered` (the default): one journal for the whole file system, committed
  /// in order; any `fsync` commits it. Entry changes, truncations and the size change of an
  /// append are journalled, so a crash keeps a prefix of them since the last commit, an
  /// append's data reaching the disk before its size does (the last one kept may stop at a
  /// 4 KiB page). Writes inside the file's length are not journalled: each is kept or lost
  /// (or torn at sectors) on its own until an `fsync` of its file.
  case ext4Ordered = "ext4 data=ordered"

  public var description: String { rawValue }

  /// Bytes of a sector: the unit a torn write keeps or loses in the POSIX model.
  public static let sectorSize = 512
  /// Bytes of a page: the unit the last kept append stops at under ext4.
  public static let pageSize = 4096
}

/// Where the enumeration stops being exhaustive. Chosen by `CASK_CRASH_STATES_LONG`.
public struct CrashStateBounds: Sendable {
  /// Every subset of the pending operations that a model lets a crash choose freely is
  /// explored while there are at most this many of them.
  public var exhaustiveUpTo: Int
  /// Beyond that, the subsets that lose at most this many of them, and those that keep at
  /// most this many.
  public var beyondExhaustive: Int
  /// Cut points tried for one torn write: the first half of them and the last half of its
  /// sector (or page) boundaries.
  public var tearCuts: Int

  public init(exhaustiveUpTo: Int, beyondExhaustive: Int, tearCuts: Int) {
    self.exhaustiveUpTo = exhaustiveUpTo
    self.beyondExhaustive = beyondExhaustive
    self.tearCuts = tearCuts
  }

  /// The bounds `swift test` runs with.
  public static let standard = CrashStateBounds(exhaustiveUpTo: 6, beyondExhaustive: 1, tearCuts: 4)
  /// The bounds of a long run (`CASK_CRASH_STATES_LONG=1`, `scripts/soak.sh`).
  public static let long = CrashStateBounds(exhaustiveUpTo: 10, beyondExhaustive: 2, tearCuts: 16)

  /// Whether the long mode was asked for.
  public static var isLong: Bool {
    guard let value = getenvString("CASK_CRASH_STATES_LONG") else { return false }
    return !value.isEmpty && value != "0"
  }

  /// `long` when `CASK_CRASH_STATES_LONG` is set (and not `0`), `standard` otherwise.
  public static var fromEnvironment: CrashStateBounds { isLong ? .long : .standard }

  /// The subsets of `count` free choices to explore, each as the positions it loses.
  func lossSets(of count: Int) -> [[Int]] {
    if count <= exhaustiveUpTo {
      return (0..<(1 << count)).map { mask in (0..<count).filter { mask & (1 << $0) != 0 } }
    }
    var result: [[Int]] = []
    let all = Array(0..<count)
    for size in 0...beyondExhaustive {
      for chosen in Self.combinations(of: all, size: size) {
        result.append(chosen)
        let kept = Set(chosen)
        result.append(all.filter { !kept.contains($0) })
      }
    }
    return result
  }

  static func combinations(of items: [Int], size: Int) -> [[Int]] {
    guard size > 0 else { return [[]] }
    guard items.count >= size else { return [] }
    var result: [[Int]] = []
    for (position, item) in items.enumerated() {
      for rest in combinations(of: Array(items[(position + 1)...]), size: size - 1) {
        result.append([item] + rest)
      }
    }
    return result
  }

  /// The byte offsets inside `[offset, offset + length)` a tear may cut at: multiples of
  /// `unit`, at most `tearCuts` of them (the first and last halves).
  func cuts(offset: Int, length: Int, unit: Int) -> [Int] {
    var boundaries: [Int] = []
    var next = (offset / unit + 1) * unit
    while next < offset + length {
      boundaries.append(next)
      next += unit
    }
    guard boundaries.count > tearCuts else { return boundaries }
    return Array(boundaries.prefix(tearCuts / 2)) + Array(boundaries.suffix(tearCuts - tearCuts / 2))
  }
}

private func getenvString(_ name: String) -> String? {
  guard let value = getenv(name) else { return nil }
  return String(cString: value)
}

import CaskPlatform
import Foundation

/// Spreads the sealing of a large batch over several threads.
///
/// Why: AES-256-CBC encryption is serial inside a message (each block waits for the one
/// before), so one thread seals at the cipher's speed and no faster, and a batch of 1,000
/// values of 1 KiB spends most of its time there. The messages of a batch are independent of
/// each other: on two free cores a batch seals in about half the time. The CPU time is the
/// same; on a busy machine the lanes simply run one after another.
///
/// The calling thread is one of the lanes. Small work stays on it alone: handing work to
/// another thread costs a few microseconds, the sealing of a few kilobytes.
enum SealingLanes {
  /// Value bytes below which a batch's values are sealed on the calling thread alone (each
  /// further lane gets at least this many).
  static let minimumBytesPerLane = 32 << 10
  /// Records below which a batch's key messages (about 100 bytes each, mostly the HMAC's fixed
  /// cost) are sealed on the calling thread alone (each further lane gets at least this many).
  static let minimumRecordsPerLane = 128

  /// The default number of lanes: the CPUs this process may run on, at most four (beyond that the
  /// write of the joined records dominates). Read once per process, from the affinity mask
  /// (`Processors.usable`: Foundation's count costs a fresh process's first open a seventh of
  /// its time).
  static let defaultLimit = max(1, min(4, Processors.usable))

  /// How many lanes `count` items holding `bytes` bytes in all are worth, at most `limit`.
  static func lanes(count: Int, bytes: Int, limit: Int) -> Int {
    guard limit > 1, count > 1 else { return 1 }
    let byBytes = bytes / minimumBytesPerLane
    let byCount = count / minimumRecordsPerLane
    return max(1, min(limit, count, max(byBytes, byCount)))
  }

  /// `transform` applied to `0..<count`, in order, the items split into `lanes` contiguous runs
  /// that run on as many threads at once.
  ///
  /// `transform` is called from several threads at once: it may only read what the caller
  /// shares with it, and write what belongs to the item it is given.
  ///
  /// - Throws: the error of the first run (in item order) that failed, once every run ended.
  static func map<Item>(count: Int, lanes: Int, _ transform: (Int) throws -> Item) throws -> [Item] {
    guard lanes > 1, count > 1 else { return try (0..<count).map(transform) }
    let runs = Locked(Runs<Item>(count: lanes))
    withoutActuallyEscaping(transform) { transform in
      let shared = SharedTransform(call: transform)
      DispatchQueue.concurrentPerform(iterations: lanes) { lane in
        // The lock, taken at the start of a run and again at its end, orders the caller's
        // writes before the run and the run's writes before the caller reads them, in a way
        // ThreadSanitizer sees (it does not see inside Dispatch's own hand-over).
        runs.withLock { _ in }
        let items = count * lane / lanes..<count * (lane + 1) / lanes
        let result = Result { try items.map(shared.call) }
        runs.withLock { $0.results[lane] = result }
      }
    }
    return try runs.withLock { runs in
      var joined: [Item] = []
      joined.reserveCapacity(count)
      for result in runs.results {
        // Every lane stored its result before `concurrentPerform` returned.
        guard let result else { preconditionFailure("a sealing lane ended without its result") }
        joined.append(contentsOf: try result.get())
      }
      return joined
    }
  }

  /// Calls `body` on every item of `0..<count`, split as `map` splits them.
  ///
  /// - Throws: the error of the first run (in item order) that failed, once every run ended.
  static func forEach(count: Int, lanes: Int, _ body: (Int) throws -> Void) throws {
    guard lanes > 1, count > 1 else {
      for item in 0..<count { try body(item) }
      return
    }
    _ = try map(count: count, lanes: lanes, body)
  }

  /// The caller's closure, handed to the lanes. `@unchecked`: what it may touch from several
  /// threads is the contract of `map`, which the compiler cannot check for a closure.
  private struct SharedTransform<Item>: @unchecked Sendable {
    let call: (Int) throws -> Item
  }

  /// Each lane's result, stored when the lane ends.
  private struct Runs<Item> {
    var results: [Result<[Item], any Error>?]

    init(count: Int) {
      results = Array(repeating: nil, count: count)
    }
  }
}

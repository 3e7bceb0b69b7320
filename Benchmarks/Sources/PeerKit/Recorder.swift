import Foundation
import Synchronization

/// Collects the runs of each workload in the order they were first recorded, and times
/// operations into a reused sample buffer so that timing adds no allocation per run.
struct Recorder {
  private struct Entry {
    var operations: Int
    var seconds: [Double] = []
    var p50s: [Double] = []
    var p99s: [Double] = []
    var note: String?
  }

  private var order: [String] = []
  private var entries: [String: Entry] = [:]
  private var samples: [UInt64] = []

  init(capacity: Int) {
    samples.reserveCapacity(capacity)
  }

  /// Adds one run of `name` from its wall time and its per-operation samples (nanoseconds).
  mutating func add(_ name: String, operations: Int, seconds: Double, samples runSamples: inout [UInt64], note: String?)
  {
    let percentiles = Statistics.percentiles(&runSamples, [50, 99])
    if entries[name] == nil {
      order.append(name)
      entries[name] = Entry(operations: operations, note: note)
    }
    entries[name]?.seconds.append(seconds)
    entries[name]?.p50s.append(percentiles[0])
    entries[name]?.p99s.append(percentiles[1])
  }

  /// Times `count` operations one by one and records them as one run of `name`.
  mutating func timeEach(_ name: String, count: Int, note: String? = nil, _ body: (Int) throws -> Void) rethrows {
    var buffer = takeBuffer()
    let start = ProcessFigures.now()
    for index in 0..<count {
      let began = ProcessFigures.now()
      try body(index)
      buffer.append(ProcessFigures.now() &- began)
    }
    let seconds = ProcessFigures.seconds(since: start)
    add(name, operations: count, seconds: seconds, samples: &buffer, note: note)
    samples = buffer
  }

  /// Times `count` operations in groups of `groupSize` (one transaction each) and records one
  /// sample per group: its time divided by its size, an operation's share of its transaction.
  mutating func timeGroups(
    _ name: String, count: Int, groupSize: Int, note: String? = nil, _ body: (Range<Int>) throws -> Void
  ) rethrows {
    var buffer = takeBuffer()
    let start = ProcessFigures.now()
    var lower = 0
    while lower < count {
      let upper = Swift.min(count, lower + groupSize)
      let began = ProcessFigures.now()
      try body(lower..<upper)
      buffer.append((ProcessFigures.now() &- began) / UInt64(upper - lower))
      lower = upper
    }
    let seconds = ProcessFigures.seconds(since: start)
    add(name, operations: count, seconds: seconds, samples: &buffer, note: note)
    samples = buffer
  }

  /// Times one operation (an open, a compaction) as a run of `name`.
  mutating func timeOnce<Result>(_ name: String, note: String? = nil, _ body: () throws -> Result) rethrows -> Result {
    let began = ProcessFigures.now()
    let result = try body()
    let elapsed = ProcessFigures.now() &- began
    var one = [elapsed]
    add(name, operations: 1, seconds: Double(elapsed) / 1e9, samples: &one, note: note)
    return result
  }

  private mutating func takeBuffer() -> [UInt64] {
    var buffer = samples
    samples = []
    buffer.removeAll(keepingCapacity: true)
    return buffer
  }

  /// Every workload recorded, with the medians of its runs' percentiles.
  var figures: [WorkloadFigures] {
    order.compactMap { name in
      entries[name].map {
        WorkloadFigures(
          name: name, operations: $0.operations, seconds: $0.seconds, p50: Statistics.median($0.p50s),
          p99: Statistics.median($0.p99s), note: $0.note)
      }
    }
  }
}

/// A flag one thread raises and another polls.
final class StopFlag: Sendable {
  private let raised = Atomic<Bool>(false)

  func raise() {
    raised.store(true, ordering: .releasing)
  }

  var isRaised: Bool {
    raised.load(ordering: .acquiring)
  }
}

/// State that threads share behind a lock.
final class Shared<Value>: Sendable {
  let mutex: Mutex<Value>

  init(_ value: sending Value) {
    mutex = Mutex(value)
  }
}

/// Runs `body(index)` on `count` new threads at once, waits for all of them, and returns what
/// each returned, in thread order; throws the first error a thread threw.
public func onThreads<Result: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Result) throws
  -> [Result]
{
  let results = Shared<[Int: Result]>([:])
  let failure = Shared<(any Error)?>(nil)
  let group = DispatchGroup()
  for index in 0..<count {
    group.enter()
    let thread = Thread {
      do {
        let result = try body(index)
        results.mutex.withLock { $0[index] = result }
      } catch {
        failure.mutex.withLock { if $0 == nil { $0 = error } }
      }
      group.leave()
    }
    thread.stackSize = 1 << 20
    thread.start()
  }
  group.wait()
  if let error = failure.mutex.withLock({ $0 }) { throw error }
  return results.mutex.withLock { collected in (0..<count).compactMap { collected[$0] } }
}

/// Runs `perThread` calls of `body(thread, index)` on each of `threads` threads started
/// together, timing every call: the threaded workloads of the peers and of `cask-bench engine`.
/// Returns the seconds until the last thread is done, and each call's nanoseconds.
public func timedOnThreads(
  _ threads: Int, perThread: Int, _ body: @escaping @Sendable (_ thread: Int, _ index: Int) throws -> Void
) throws -> (seconds: Double, samples: [UInt64]) {
  let start = ProcessFigures.now()
  let samples = try onThreads(threads) { thread in
    var samples: [UInt64] = []
    samples.reserveCapacity(perThread)
    for index in 0..<perThread {
      let began = ProcessFigures.now()
      try body(thread, index)
      samples.append(ProcessFigures.now() &- began)
    }
    return samples
  }
  return (ProcessFigures.seconds(since: start), samples.flatMap { $0 })
}

/// A thread whose error is handed to the one that waits for it.
final class JoinableThread: Sendable {
  private let done = DispatchSemaphore(value: 0)
  private let failure = Shared<(any Error)?>(nil)

  init(_ body: @escaping @Sendable () throws -> Void) {
    let thread = Thread { [done, failure] in
      do {
        try body()
      } catch {
        failure.mutex.withLock { $0 = error }
      }
      done.signal()
    }
    thread.start()
  }

  /// Waits for the thread to end; throws what its body threw.
  func wait() throws {
    done.wait()
    if let error = failure.mutex.withLock({ $0 }) { throw error }
  }
}

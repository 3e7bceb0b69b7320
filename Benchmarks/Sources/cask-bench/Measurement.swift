// Timing, statistics and the table printer shared by every subcommand.
import Foundation
import PeerKit

// MARK: Timing

/// CPU time, beside the wall clock: on a machine busy with other work the wall time also counts
/// the waits for a core, the CPU time does not.
enum CPUTime {
  /// Seconds of CPU the calling thread has used.
  static func thread() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  /// Seconds of CPU (user and system) this process has used, every thread.
  static func process() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
  }
}

/// Something to time: `body(n)` performs the operation `n` times.
struct Workload {
  let name: String
  let body: (Int) throws -> Void
}

/// How many operations each run of a workload did and how long each run took.
struct Runs: Codable {
  let iterations: Int
  let seconds: [Double]

  var rates: [Double] {
    seconds.map { Double(iterations) / $0 }
  }

  var medianRate: Double {
    Statistics.median(rates)
  }
}

enum Timing {
  /// An iteration count for which `body` takes about `seconds`, found by doubling from one.
  static func calibrate(_ body: (Int) throws -> Void, seconds: Double) rethrows -> Int {
    var iterations = 1
    while true {
      let elapsed = try Stopwatch.seconds { try body(iterations) }
      if elapsed >= seconds / 8 || iterations >= 1 << 30 {
        return Swift.max(1, Int((Double(iterations) * seconds / Swift.max(elapsed, 1e-9)).rounded()))
      }
      iterations *= 2
    }
  }

  /// Times every workload `runs` times, round-robin (run 1 of each, then run 2 of each...), so
  /// that a burst of noise is spread over the workloads; each is calibrated (and warmed up)
  /// first, and `afterRound(round)` runs after each round (a bound measured in the same stretch).
  ///
  /// - Returns: each workload's runs on the wall clock and on the calling thread's CPU clock.
  static func interleavedRuns(
    _ workloads: [Workload], runs: Int, secondsPerRun: Double, progress: (String) -> Void = { _ in },
    afterRound: (Int) -> Void = { _ in }
  ) throws -> (wall: [Runs], cpu: [Runs]) {
    var iterations: [Int] = []
    for workload in workloads {
      progress(workload.name)
      iterations.append(try calibrate(workload.body, seconds: secondsPerRun))
    }
    var wall = Array(repeating: [Double](), count: workloads.count)
    var cpu = wall
    for round in 1...Swift.max(runs, 1) {
      for (index, workload) in workloads.enumerated() {
        let cpuStart = CPUTime.thread()
        wall[index].append(try Stopwatch.seconds { try workload.body(iterations[index]) })
        cpu[index].append(Swift.max(CPUTime.thread() - cpuStart, 1e-9))
      }
      afterRound(round)
    }
    return (
      zip(iterations, wall).map { Runs(iterations: $0, seconds: $1) },
      zip(iterations, cpu).map { Runs(iterations: $0, seconds: $1) }
    )
  }

  /// The seconds of each of `count` single operations timed one by one.
  static func latencies(count: Int, _ operation: () throws -> Void) rethrows -> [Double] {
    var samples: [Double] = []
    samples.reserveCapacity(count)
    for _ in 0..<count {
      samples.append(try Stopwatch.seconds(operation))
    }
    return samples
  }
}

// MARK: Statistics

/// p50 and p99 of single operations (seconds), and the rate their total time gives.
struct Latency: Codable {
  let count: Int
  let p50: Double
  let p99: Double
  /// `nil` without samples, and in engine results files written before it was recorded.
  let ratePerSecond: Double?

  init(samples: [Double]) {
    count = samples.count
    let sorted = samples.sorted()
    p50 = Statistics.percentile(sorted, 50)
    p99 = Statistics.percentile(sorted, 99)
    ratePerSecond = samples.isEmpty ? nil : Double(samples.count) / samples.reduce(0, +)
  }
}

// MARK: Printing

/// Number formatting for tables.
enum Number {
  static func fixed(_ value: Double, _ decimals: Int) -> String {
    String(format: "%.\(decimals)f", value)
  }

  /// A whole number with thousands separated by commas: 123,456.
  static func grouped<Whole: BinaryInteger>(_ value: Whole) -> String {
    grouped(Double(value))
  }

  static func grouped(_ value: Double) -> String {
    let digits = String(Int(value.rounded()))
    var groups: [Substring] = []
    var end = digits.endIndex
    while end > digits.startIndex {
      let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
      groups.insert(digits[start..<end], at: 0)
      end = start
    }
    return groups.joined(separator: ",")
  }

  /// Microseconds from seconds, for latencies: two decimals below 100 µs, whole above.
  static func microseconds(_ seconds: Double) -> String {
    seconds < 1e-4 ? fixed(seconds * 1e6, 2) : grouped(seconds * 1e6)
  }
}

/// A GitHub Markdown table with padded columns: it reads well in a terminal, and is what
/// `cask-bench report` writes into Docs/BENCHMARKS.md.
struct Table {
  enum Alignment {
    case left
    case right
  }

  let columns: [(title: String, alignment: Alignment)]
  private(set) var rows: [[String]] = []

  init(_ columns: [(title: String, alignment: Alignment)], rows: [[String]] = []) {
    self.columns = columns
    for row in rows { append(row) }
  }

  mutating func append(_ row: [String]) {
    precondition(row.count == columns.count, "Table: \(row.count) cells for \(columns.count) columns")
    rows.append(row)
  }

  func render() -> String {
    let widths = columns.indices.map { column in
      ([columns[column].title] + rows.map { $0[column] }).map(\.count).reduce(3, Swift.max)
    }
    func line(_ cells: [String]) -> String {
      let padded = cells.indices.map { column in
        let padding = String(repeating: " ", count: widths[column] - cells[column].count)
        return columns[column].alignment == .left ? cells[column] + padding : padding + cells[column]
      }
      return "| " + padded.joined(separator: " | ") + " |"
    }
    let rule = columns.indices.map { column in
      let dashes = String(repeating: "-", count: widths[column] + 1)
      return columns[column].alignment == .left ? dashes + "-" : dashes + ":"
    }
    return ([line(columns.map(\.title)), "|" + rule.joined(separator: "|") + "|"] + rows.map(line))
      .joined(separator: "\n")
  }
}

/// A count of the bytes the timed operations produced, so the optimiser cannot drop the work.
final class Sink {
  var bytes = 0
}

import Foundation
import PeerKit

/// An engine of a comparison, run by the `peer-*` executable of its library: the part of its
/// name before `+` (`lmdb+rncryptor` runs in `peer-lmdb`, `ciphercask+json` in `peer-cask`).
struct PeerEngine: ExpressibleByStringLiteral {
  let name: String

  init(stringLiteral name: String) {
    self.name = name
  }

  var executable: String {
    let library = name.prefix { $0 != "+" }
    return "peer-" + (library == "ciphercask" ? "cask" : library)
  }

  static let cipherCask: PeerEngine = "ciphercask"
}

/// Runs the `peer-*` executables built beside `cask-bench` and decodes the report each prints.
enum PeerProcess {
  /// `items` starting at the `round`th (from 1): no engine always runs first in its round, right
  /// after the previous round's last engine and its disk writes.
  static func rotated<Item>(_ items: [Item], round: Int) -> [Item] {
    let start = (round - 1) % Swift.max(items.count, 1)
    return Array(items[start...] + items[..<start])
  }

  /// Runs every engine once per round, one process a run, each round starting with the next
  /// engine, so that a burst of noise lands on all of them; returns each engine's runs gathered.
  static func rounds(
    _ engines: [PeerEngine], rounds: Int, label: String, request: (PeerEngine) -> PeerRequest
  ) throws -> [GatheredEngine] {
    var gathered: [String: GatheredEngine] = [:]
    for round in 1...Swift.max(rounds, 1) {
      for engine in rotated(engines, round: round) {
        printToStandardError("\(label), round \(round) of \(rounds), \(engine.name)")
        let peer = try run(engine.executable, request(engine))
        gathered[engine.name, default: GatheredEngine(engine: peer.engine, setup: peer.setup, keys: peer.keys)].add(
          peer)
      }
    }
    return engines.compactMap { gathered[$0.name] }
  }

  /// The folder of the running executable, where SwiftPM puts every product of the package.
  static var binaryFolder: URL {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
  }

  /// Fails early, naming the build command, when a peer executable is missing.
  static func checkBuilt(_ executables: [String]) throws {
    for executable in Set(executables).sorted() {
      let path = binaryFolder.appendingPathComponent(executable).path
      guard FileManager.default.isExecutableFile(atPath: path) else {
        throw BenchError(
          "'\(executable)' is not built beside cask-bench; run 'swift build -c release --package-path Benchmarks'")
      }
    }
  }

  static func run(_ executable: String, _ request: PeerRequest) throws -> PeerReport {
    try output(executable, [try PeerMain.json(request)])
  }

  /// Runs `executable`, built beside this one, and decodes the JSON it prints; its progress
  /// lines pass through to standard error.
  static func output<Output: Decodable>(_ executable: String, _ arguments: [String]) throws -> Output {
    let output = try Subprocess.output(
      executable, arguments, executable: binaryFolder.appendingPathComponent(executable), passingErrors: true)
    do {
      return try JSONDecoder().decode(Output.self, from: Data(output.utf8))
    } catch {
      throw BenchError("'\(executable) \(arguments.first ?? "")' printed no \(Output.self): \(error)")
    }
  }
}

/// The runs of one engine's workload gathered from several peer processes (one run each, so
/// that the engines take turns and a burst of noise is spread over all of them).
struct GatheredWorkload: Codable {
  let name: String
  let operations: Int
  var note: String?
  /// Per run: wall seconds, p50 and p99 of one operation (seconds).
  var seconds: [Double] = []
  var p50s: [Double] = []
  var p99s: [Double] = []

  var rates: [Double] { seconds.map { Double(operations) / Swift.max($0, 1e-12) } }
  var opsPerSecond: Double { Statistics.median(rates) }
  var p50: Double { Statistics.median(p50s) }
  var p99: Double { Statistics.median(p99s) }
  /// The median of the runs' wall seconds (for one-shot workloads: open, compact).
  var medianSeconds: Double { Statistics.median(seconds) }
}

/// One engine's figures for one mode and size, over all its runs.
struct GatheredEngine: Codable {
  let engine: String
  let setup: String
  let keys: Int
  var runs = 0
  var workloads: [GatheredWorkload] = []
  var bytesAfterOverwrite: [Double] = []
  var bytesAfterCompaction: [Double] = []
  var compaction = ""
  var compactionSupported = true
  var logicalBytes = 0
  /// The largest peak resident set of its processes, and the harness's own share of it.
  var peakRSSBytes = 0
  var harnessRSSBytes = 0

  /// Adds the runs of one peer report.
  mutating func add(_ report: PeerReport) {
    runs += report.runs
    for figures in report.workloads {
      var index = workloads.firstIndex { $0.name == figures.name }
      if index == nil {
        workloads.append(GatheredWorkload(name: figures.name, operations: figures.operations, note: figures.note))
        index = workloads.count - 1
      }
      guard let index else { continue }
      workloads[index].seconds += figures.seconds
      workloads[index].p50s += Array(repeating: figures.p50, count: figures.seconds.count)
      workloads[index].p99s += Array(repeating: figures.p99, count: figures.seconds.count)
    }
    if let space = report.space {
      bytesAfterOverwrite.append(Double(space.bytesAfterOverwrite))
      bytesAfterCompaction.append(Double(space.bytesAfterCompaction))
      compaction = space.compaction
      compactionSupported = space.compactionSupported
      logicalBytes = space.logicalBytes
    }
    if report.peakRSSBytes > peakRSSBytes {
      peakRSSBytes = report.peakRSSBytes
      harnessRSSBytes = report.harnessRSSBytes
    }
  }

  func workload(_ name: String) -> GatheredWorkload? {
    workloads.first { $0.name == name }
  }

  var amplificationAfterOverwrite: Double? {
    bytesAfterOverwrite.isEmpty ? nil : Statistics.median(bytesAfterOverwrite) / Double(Swift.max(logicalBytes, 1))
  }

  var amplificationAfterCompaction: Double? {
    bytesAfterCompaction.isEmpty
      ? nil : Statistics.median(bytesAfterCompaction) / Double(Swift.max(logicalBytes, 1))
  }
}

import CaskEngine
import Foundation
import PeerKit

/// `cask-bench profile`: one engine workload alone, for a profiler to look at. The store is
/// built first; the timed loop is `ProfileCommand.loop`, a function of its own, so that
/// `valgrind --tool=callgrind --toggle-collect='*ProfileCommand*loop*'` counts only the
/// workload's instructions and `perf record -g -e cpu-clock` shows it as one subtree. Prints
/// the microseconds per operation of the loop (no bound or peer: the profile is the result).
///
/// ```sh
/// perf record -g -e cpu-clock -o put.data -- cask-bench profile put --ops 200000
/// valgrind --tool=callgrind --toggle-collect='*ProfileCommand*loop*' cask-bench profile get --ops 20000
/// ```
enum ProfileCommand: BenchCommand {
  static let name = "profile"
  static let abstract =
    "One engine or collection workload alone (puts, gets, opens, object saves and reads), for perf or callgrind."
  static let usage =
    "cask-bench profile put|batch|get|delete|open|open-events|object-save|object-get|object-all [--ops N] [--keys N] "
    + "[--coder binary|json] [--dir DIR] [--store DIR] [--repeats N] [--sealing-threads N]"
  static let options: [(flag: String, help: String)] = [
    ("put", "Single puts into a new store, one operation per call, durability never."),
    ("batch", "Puts in batches of 500 into a new store."),
    ("get", "Gets of random keys of a store of --keys keys, after it is built."),
    ("delete", "Deletes of every key of a store of --keys keys once, in random order (--ops is ignored)."),
    ("open", "Opens from hints of a store of --keys keys of 16 bytes, with its keys (no key derivation)."),
    ("open-events", "Opens of a collection of --keys events with indexes on city and date, and its first queries."),
    ("object-save", "Saves of distinct 10-field objects into a new collection, one per call, durability never."),
    ("object-get", "Gets by random id from a collection of --keys 10-field objects."),
    ("object-all", "all() of a collection of --keys 10-field objects, repeated; an operation is one object."),
    ("--coder NAME", "object-*: the collection's coder, binary (the default coder) or json (JSONCaskCoder)."),
    ("--store DIR", "open, open-events: build the store there once and keep it (default: a scratch directory)."),
    ("--repeats N", "open, open-events: opens in a row (default 3)."),
    ("--ops N", "Operations in the timed loop (default 100,000)."),
    ("--keys N", "Keys of the store gets read, objects of the collection read (default 10,000)."),
    ("--dir DIR", "Where the store goes (default: the temporary directory)."),
    (
      "--sealing-threads N",
      "put, batch, get, delete: the store's sealingThreads (default: the library's, the cores up to four)."
    ),
    (
      "--perf-control FIFO",
      "Write 'enable' and 'disable' to perf's control FIFO around the loop (perf record -D -1 --control)."
    ),
  ]

  enum Workload: String {
    case put, batch, get, delete
  }

  static func run(arguments: [String]) throws {
    var options = Options(arguments)
    let operations = try options.positive("--ops") ?? 100_000
    let keysGiven = try options.positive("--keys")
    let keyCount = keysGiven ?? 10_000
    let base = try options.value("--dir") ?? FileManager.default.temporaryDirectory.path
    let control = try options.value("--perf-control").map { try PerfControl(path: $0) }
    let kept = try options.value("--store")
    let repeats = try options.positive("--repeats") ?? 3
    let coder = try options.value("--coder") ?? "binary"
    let sealingThreads = try options.positive("--sealing-threads")
    guard coder == "binary" || coder == "json" else {
      throw UsageError("'--coder' is binary or json, not '\(coder)'")
    }
    if let objects = ObjectWorkload.allCases.first(where: { options.flag($0.rawValue) }) {
      try options.finish()
      let scratch = try ScratchDirectory(in: base)
      defer { scratch.remove() }
      try profileObjects(
        objects, operations: operations, objects: keyCount, json: coder == "json",
        directory: "\(scratch.path)/objects.cask", control: control)
      return
    }
    for opens in ["open", "open-events"] where options.flag(opens) {
      try options.finish()
      let scratch = try ScratchDirectory(in: base)
      defer { scratch.remove() }
      try profileOpen(
        keyCount: keysGiven ?? 1_000_000,
        directory: kept ?? "\(scratch.path)/open.cask", repeats: repeats, control: control,
        events: opens == "open-events")
      return
    }
    let workload = try [Workload.put, .batch, .get, .delete].first { options.flag($0.rawValue) }
      .orThrow(
        UsageError("'profile' needs one workload: put, batch, get, delete, open, open-events or object-save|get|all"))
    try options.finish()
    let scratch = try ScratchDirectory(in: base)
    defer { scratch.remove() }
    var random = SeededGenerator(seed: 0x9F0F)
    let values = EngineCommand.makeValues(count: 64, bytes: 1024, using: &random)
    let reads = workload == .get || workload == .delete
    let keys = EngineCommand.makeKeys(count: reads ? keyCount : operations, length: 16, using: &random)
    let directory = "\(scratch.path)/profile.cask"
    if reads { try EngineCommand.build(directory, keys: keys, values: values) }
    var storeOptions = EngineCommand.unsynced
    if let sealingThreads { storeOptions.sealingThreads = sealingThreads }
    let store = try CaskStore(path: directory, password: EngineCommand.password, options: storeOptions)
    defer { try? store.close() }
    let order =
      workload == .delete
      ? Array(keys.indices).shuffled(using: &random)
      : (0..<operations).map { workload == .get ? Int.random(in: 0..<keys.count, using: &random) : $0 }
    control?.send("enable")
    let start = DispatchTime.now().uptimeNanoseconds
    let cpuStart = ImportCommand.cpuSeconds()
    let checked = try loop(workload, store: store, keys: keys, values: values, order: order)
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let cpu = ImportCommand.cpuSeconds() - cpuStart
    control?.send("disable")
    print(
      "\(workload.rawValue): \(Number.grouped(Double(order.count))) operations in \(Number.fixed(seconds, 3)) s, "
        + "\(Number.fixed(seconds * 1e6 / Double(order.count), 2)) µs each, "
        + "\(Number.fixed(cpu * 1e6 / Double(order.count), 2)) µs of CPU each, every thread "
        + "(\(checked) bytes read or keys deleted)")
  }

  /// The timed loop: the only code a `--toggle-collect` on it counts.
  @inline(never)
  static func loop(
    _ workload: Workload, store: CaskStore, keys: [String], values: [Data], order: [Int]
  ) throws -> Int {
    var bytes = 0
    switch workload {
    case .put:
      for index in order { try store.put(values[index & 63], forKey: keys[index]) }
    case .batch:
      for start in stride(from: 0, to: order.count, by: EngineCommand.batchSize) {
        try store.batch { batch in
          for index in order[start..<min(order.count, start + EngineCommand.batchSize)] {
            try batch.put(values[index & 63], forKey: keys[index])
          }
        }
      }
    case .get:
      for index in order { bytes += try store.get(keys[index])?.count ?? 0 }
    case .delete:
      for index in order where try store.delete(keys[index]) { bytes += 1 }
    }
    return bytes
  }
}

/// perf's control FIFO: the profile then holds the timed loop alone, not the store's set-up
/// or its close.
struct PerfControl {
  let handle: FileHandle

  init(path: String) throws {
    guard let handle = FileHandle(forWritingAtPath: path) else {
      throw UsageError("cannot open '\(path)' for writing: give perf's control FIFO")
    }
    self.handle = handle
  }

  func send(_ command: String) {
    handle.write(Data((command + "\n").utf8))
  }
}

extension Optional {
  /// The value, or `error` thrown.
  fileprivate func orThrow(_ error: some Error) throws -> Wrapped {
    guard let self else { throw error }
    return self
  }
}

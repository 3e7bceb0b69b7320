import CaskEngine
import CipherCask
import Foundation
import PeerKit
import RNCryptorCodec

/// `cask-bench profile`: one engine workload alone, for a profiler. The store is built first;
/// the timed work runs inside `ProfileCommand.loop`, so that callgrind's `--toggle-collect`
/// counts only it and `perf record -g` shows it as one subtree. Prints the microseconds per
/// operation. Stores use `.never`; the event and open workloads fixed keys (no key derivation).
///
/// ```sh
/// perf record -g -e cpu-clock -o put.data -- cask-bench profile put --ops 200000
/// valgrind --tool=callgrind --toggle-collect='*ProfileCommand*loop*' cask-bench profile get --ops 20000
/// cask-bench profile open --keys 1000000 --store /tmp/open-1m    # built once, then kept
/// ```
enum ProfileCommand: BenchCommand {
  static let name = "profile"
  static let abstract =
    "One engine workload alone (puts, gets, deletes, opens, event saves, pages), for perf or callgrind."
  static let usage =
    "cask-bench profile put|batch|get|delete|open|event-save|page [--ops N] "
    + "[--keys N] [--indexes none|1|3|each] [--offset N] [--dir DIR] [--store DIR] [--perf-control FIFO]"
  static let options: [(flag: String, help: String)] = [
    ("put", "Single puts into a new store, one operation per call, durability never."),
    ("batch", "Puts in batches of 500 into a new store."),
    ("get", "Gets of random keys of a store of --keys keys, after it is built."),
    ("delete", "Deletes of every key of a store of --keys keys once, in random order (--ops is ignored)."),
    (
      "open",
      "Opens (each plus one get) of a filled and overwritten store of --keys keys of 16 bytes, with its keys"
        + " (no key derivation); --ops opens (default 3)."
    ),
    (
      "event-save",
      "Saves of new events, one per call, into a collection of --keys events with --indexes (queries' write costs)."
    ),
    (
      "page",
      "Fetches of a city's 20 newest at --offset, one per call, in a collection of --keys events with the"
        + " indexes of 'queries' (its page0 and page1000)."
    ),
    ("--offset N", "page: the page's offset (default 1,000)."),
    ("--indexes SET", "event-save: none (the default), 1 (city), 3 (city, date, country) or each (attendee each:)."),
    ("--store DIR", "open: build the store there once and keep it (default: a scratch directory)."),
    ("--ops N", "Operations in the timed loop (default 100,000)."),
    ("--keys N", "Keys of the store gets and deletes read, events before event-save (default 10,000)."),
    ("--dir DIR", "Where the store goes (default: the temporary directory)."),
    (
      "--perf-control FIFO",
      "Write 'enable' and 'disable' to perf's control FIFO around the loop (perf record -D -1 --control)."
    ),
  ]

  static let workloads = ["put", "batch", "get", "delete", "open", "event-save", "page"]

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let opsGiven = try options.positive("--ops")
    let operations = opsGiven ?? 100_000
    let keysGiven = try options.positive("--keys")
    let base = try options.value("--dir") ?? FileManager.default.temporaryDirectory.path
    let control = try options.value("--perf-control").map { try PerfControl(path: $0) }
    let kept = try options.value("--store")
    let indexSet = try options.value("--indexes") ?? "none"
    let offset = try options.number("--offset", atLeast: 0) ?? 1_000
    guard let indexes = QueriesCommand.writeIndexSets.first(where: { $0.name == indexSet })?.indexes else {
      throw UsageError("'--indexes' is none, 1, 3 or each, not '\(indexSet)'")
    }
    guard let workload = workloads.first(where: { options.flag($0) }) else {
      throw UsageError("'profile' needs one workload: \(workloads.joined(separator: ", "))")
    }
    try options.finish()
    let scratch = try ScratchDirectory(in: base)
    defer { scratch.remove() }
    let profile = Profile(operations: operations, keys: keysGiven ?? 10_000, control: control)
    switch workload {
    case "open":
      try profile.opens(
        of: kept ?? "\(scratch.path)/open.cask", keys: keysGiven ?? 1_000_000, repeats: opsGiven ?? 3)
    case "event-save":
      try profile.eventSaves(indexes: indexes, label: indexSet, directory: "\(scratch.path)/events.cask")
    case "page":
      try profile.pages(offset: offset, directory: "\(scratch.path)/events.cask")
    default:
      try profile.engine(workload, directory: "\(scratch.path)/profile.cask")
    }
  }

  /// The timed work: the only code a `--toggle-collect` on it counts.
  @inline(never)
  static func loop<Result>(_ body: () throws -> Result) rethrows -> Result {
    try body()
  }
}

/// One profiled run's settings, and the set-up and timed loop of each kind of workload.
struct Profile {
  let operations: Int
  let keys: Int
  let control: PerfControl?

  /// The fixed keys of the collection and open stores.
  static func storeKeys() throws -> RNCryptor.Keys {
    try RNCryptor.Keys(encryptionKey: Data(repeating: 0x11, count: 32), hmacKey: Data(repeating: 0x22, count: 32))
  }

  static let fixedKeyOptions = CaskStore.Options(durability: .never, autoCompaction: nil)

  /// Times `body` inside `ProfileCommand.loop`, between perf's `enable` and `disable`, and
  /// prints the wall and CPU microseconds of one of its `count` operations.
  func time(_ label: String, count: Int, checked: String, _ body: () throws -> Int) rethrows {
    control?.send("enable")
    let start = ProcessFigures.now()
    let cpuStart = CPUTime.process()
    let done = try ProfileCommand.loop(body)
    let seconds = ProcessFigures.seconds(since: start)
    let cpu = CPUTime.process() - cpuStart
    control?.send("disable")
    print(
      "\(label): \(Number.grouped(count)) operations in \(Number.fixed(seconds, 3)) s, "
        + "\(Number.fixed(seconds * 1e6 / Double(count), 2)) µs each, "
        + "\(Number.fixed(cpu * 1e6 / Double(count), 2)) µs of CPU each, every thread (\(done) \(checked))")
  }

  /// put, batch, get, delete on a store with `EngineCommand`'s keys and values.
  func engine(_ workload: String, directory: String) throws {
    var random = SeededGenerator(seed: 0x9F0F)
    let values = EngineCommand.makeValues(count: 64, bytes: 1024, using: &random)
    let reads = workload == "get" || workload == "delete"
    let keys = EngineCommand.makeKeys(count: reads ? self.keys : operations, length: 16, using: &random)
    if reads { try EngineCommand.build(directory, keys: keys, values: values) }
    let store = try CaskStore(path: directory, password: EngineCommand.password, options: EngineCommand.unsynced)
    defer { try? store.close() }
    let order =
      workload == "delete"
      ? Array(keys.indices).shuffled(using: &random)
      : (0..<operations).map { workload == "get" ? Int.random(in: 0..<keys.count, using: &random) : $0 }
    try time(workload, count: order.count, checked: "bytes read or keys deleted") {
      var bytes = 0
      switch workload {
      case "put":
        for index in order { try store.put(values[index & 63], forKey: keys[index]) }
      case "batch":
        for start in stride(from: 0, to: order.count, by: EngineCommand.batchSize) {
          try store.batch { batch in
            for index in order[start..<min(order.count, start + EngineCommand.batchSize)] {
              try batch.put(values[index & 63], forKey: keys[index])
            }
          }
        }
      case "get":
        for index in order { bytes += try store.get(keys[index])?.count ?? 0 }
      default:
        for index in order where try store.delete(keys[index]) { bytes += 1 }
      }
      return bytes
    }
  }

  /// event-save: the saves of `QueriesCommand.writeCosts` (new events, each its own commit, into
  /// a collection of `keys` events whose indexes were loaded by a first query), alone.
  func eventSaves(indexes: [CaskIndex<BenchEvent>], label: String, directory: String) throws {
    let all = BenchEvent.sequence(0..<(keys + operations), seed: 42)
    let store = try CaskStore(path: directory, keys: Self.storeKeys(), options: Self.fixedKeyOptions)
    defer { try? store.close() }
    let events = store.collection(BenchEvent.self, named: "events", indexes: indexes)
    try events.save(contentsOf: all[0..<keys])
    _ = try events.query().where(\.city, equals: BenchEvent.cities[0]).count()
    let fresh = all[keys...]
    try time("event-save (indexes \(label))", count: operations, checked: "events saved") {
      for event in fresh { try events.save(event) }
      return events.count
    }
  }

  /// page: `queries`' page of a city's 20 newest at `offset` (its plan, its indexes), fetched
  /// `operations` times from a collection of `keys` events after a first fetch (the indexes'
  /// entries in memory, as after the first query of an app).
  func pages(offset: Int, directory: String) throws {
    let store = try CaskStore(path: directory, keys: Self.storeKeys(), options: Self.fixedKeyOptions)
    defer { try? store.close() }
    let events = store.collection(BenchEvent.self, named: "events", indexes: CaskQuerySide.indexes)
    try events.save(contentsOf: BenchEvent.sequence(0..<keys, seed: 42))
    let queries = EventQueries(events: keys)
    let query = events.query().where(\.city, equals: queries.city).sorted(by: \.date, ascending: false)
      .offset(offset).limit(queries.pageSize)
    printToStandardError("profile: \(try query.explain())")
    let first = try query.fetch().count
    try time("page at offset \(offset)", count: operations, checked: "events on the first page") {
      for _ in 0..<operations where try query.fetch().count != first { throw BenchError("page: a fetch differs") }
      return first
    }
  }

  /// Builds (unless `directory` exists) a store of `count` 16-byte keys with 1 KiB values, each
  /// overwritten and read once (as `peers` leaves its store before `open`), and opens it
  /// `repeats` times, each plus one get, as `peers` times it. Prints the first open (as `peers`
  /// measures it) and the median and lowest of the rest.
  func opens(of directory: String, keys count: Int, repeats: Int) throws {
    let keys = try Self.storeKeys()
    var random = SeededGenerator(seed: 0x0BE7)
    let values = EngineCommand.makeValues(count: 64, bytes: 1024, using: &random)
    let names = EngineCommand.makeKeys(count: count, length: 16, using: &random)
    if !FileManager.default.fileExists(atPath: directory) {
      printToStandardError("profile: building \(Number.grouped(count)) keys in \(directory)")
      let store = try CaskStore(path: directory, keys: keys, options: Self.fixedKeyOptions)
      try EngineCommand.fill(store, keys: names[...], values: values)
      for (index, name) in names.enumerated().shuffled(using: &random) {
        try store.put(values[(index &+ 7) % values.count], forKey: name)
      }
      // Every key read once, as `peers` reads before it reopens: the read path is warm.
      for name in names where try store.get(name) == nil { throw BenchError("profile: \(name) has no value") }
      try store.close()
    }
    var times: [Double] = []
    var cpuTimes: [Double] = []
    for _ in 0..<repeats {
      control?.send("enable")
      let cpuBefore = CPUTime.thread()
      let (store, open) = try Stopwatch.timed {
        try ProfileCommand.loop {
          let store = try CaskStore(path: directory, keys: keys, options: Self.fixedKeyOptions)
          guard try store.get(names[0]) != nil else { throw BenchError("open: the first key has no value") }
          return store
        }
      }
      cpuTimes.append(CPUTime.thread() - cpuBefore)
      control?.send("disable")
      times.append(open)
      try store.close()
    }
    let rest = times.dropFirst().sorted()
    let restCPU = cpuTimes.dropFirst().sorted()
    print(
      "open plus one get: first \(Number.fixed(times[0] * 1e3, 3)) ms (CPU \(Number.fixed(cpuTimes[0] * 1e3, 3)) ms)"
        + (rest.isEmpty
          ? ""
          : ", then median \(Number.fixed(rest[rest.count / 2] * 1e3, 3)) ms, lowest \(Number.fixed(rest[0] * 1e3, 3)) ms"
            + " (CPU median \(Number.fixed(restCPU[restCPU.count / 2] * 1e3, 3)) ms) of \(rest.count)"))
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

import CipherCask
import Foundation
import PeerKit

/// `cask-bench cold`: what an app pays at launch for an indexed collection. Builds N events with
/// indexes on city, date, each attendee and (city, date), and without, then in fresh processes
/// of this executable (`--child`), round by round: open with fixed keys, count one city and
/// read its 20 newest, and the memory; open without indexes (the key directory's own heap);
/// open and save. Also the disk with five indexes, without, and in SQLCipher.
enum ColdCommand: BenchCommand {
  static let name = "cold"
  static let abstract =
    "Open, first count() and first page of an indexed collection in fresh processes; memory, save, disk."
  static let options: [(flag: String, help: String)] = [
    (
      "--quick", "2,000 events, 2 runs, the disk comparison at 2,000 events: every part, for CI; the figures are noisy."
    ),
    ("--events N[,N...]", "Collection sizes (default 1000000)."),
    ("--runs N", "Fresh processes of each kind per size; every figure is their median (default 5)."),
    ("--dir DIR", "Where the scratch stores go (default /tmp)."),
    ResultsDestination.option,
    (
      "--child PART --store DIR",
      "One fresh process's part (open, keys, save) on a built store, or the indexed store built and kept (build); prints JSON."
    ),
  ]

  /// The indexes of the cold store: what an events app declares.
  static let indexes: [CaskIndex<BenchEvent>] = [
    .index("city", \.city), .index("date", \.date), .index("attendee", each: \.attendees),
    .index("cityDate", \.city, \.date),
  ]
  static let seed: UInt64 = 42
  /// The parts of a round, each in its own process.
  static let parts = ["open", "keys", "save"]

  /// One size's figures, written to `cold-<events>.json`.
  struct Figures: Codable {
    let events: Int
    let runs: Int
    let indexes: [String]
    /// The page's plan (`explain`), keys the indexed store's open found, and segments it took
    /// from the checkpoint.
    let plan: String
    let keys: Int
    let segmentsFromCheckpoint: Int
    /// Per part (open, first count(), first page, in all, first save, second save), each run.
    let timed: [TimedRuns]
    /// Each run's VmRSS and heap in use after the open, count and page, and its VmRSS before
    /// the open: the process alone.
    let rssBytes: [Int]
    let heapBytes: [Int]
    let rssBeforeBytes: [Int]
    /// Each run's heap and RSS growth of opening the same events without indexes.
    let keyDirectoryHeapBytes: [Int]
    let keyDirectoryRSSBytes: [Int]
    /// The closed stores' files, with the indexes and without.
    let diskIndexedBytes: Int
    let diskPlainBytes: Int
    var disk: Disk?
  }

  /// The disk comparison: the closed stores' files.
  struct Disk: Codable {
    let events: Int
    let indexes: [String]
    let indexedBytes: Int
    let plainBytes: Int
    let sqlcipherBytes: Int
    let sqlcipherSetup: String
  }

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    if let part = try options.value("--child") {
      guard (parts + ["build"]).contains(part) else {
        throw UsageError("'--child' takes \(parts.joined(separator: ", ")) or build, not '\(part)'")
      }
      guard let store = try options.value("--store") else { throw UsageError("'--child' needs '--store DIR'") }
      let events = try options.number("--events", atLeast: 1) ?? 0
      try options.finish()
      // A store kept for profiling one part again and again, without a build per run.
      if part == "build" {
        print(try PeerMain.json(try build(store, events: events, indexes: indexes)))
        return
      }
      print(try child(part, store: store, events: events))
      return
    }
    let quick = options.flag("--quick")
    let sizes = try options.numbers("--events", atLeast: 1_000) ?? [quick ? 2_000 : 1_000_000]
    let runs = try options.positive("--runs") ?? (quick ? 2 : 5)
    try options.measure { results, scratch in
      try PeerProcess.checkBuilt([diskPeer.executable])
      // The disk first (five indexes, none, SQLCipher), at a size measured too, so that each
      // size's file is written as soon as it is measured.
      let disk = try measureDisk(events: quick ? 2_000 : 100_000, in: scratch)
      for size in Set(sizes + [disk.events]).sorted() {
        var figures = try measure(events: size, runs: runs, in: scratch)
        if disk.events == size { figures.disk = disk }
        try results.write(figures, size: size)
      }
    }
  }

  /// Builds the stores of one size and runs every part `runs` times, each in a fresh process,
  /// the parts taking turns round by round; every open's answers are checked.
  static func measure(events count: Int, runs: Int, in base: String) throws -> Figures {
    let scratch = try ScratchDirectory(in: base)
    defer { scratch.remove() }
    let indexed = "\(scratch.path)/indexed.cask"
    let plain = "\(scratch.path)/plain.cask"
    printToStandardError("cold: building \(Number.grouped(count)) events with \(indexes.count) indexes")
    let expected = try build(indexed, events: count, indexes: indexes)
    printToStandardError("cold: building the same events without indexes")
    _ = try build(plain, events: count, indexes: [])
    var children: [String: [Child]] = [:]
    for round in 1...runs {
      for part in PeerProcess.rotated(parts, round: round) {
        printToStandardError("cold: round \(round) of \(runs), \(part), \(Number.grouped(count)) events")
        let figures: Child = try PeerProcess.output(
          "cask-bench", [name, "--child", part, "--store", part == "keys" ? plain : indexed, "--events", "\(count)"])
        if part == "open", figures.answers != expected {
          throw BenchError("cold: the first count() or page after open differs from the events written")
        }
        children[part, default: []].append(figures)
      }
    }
    return figures(events: count, runs: runs, children: children, indexed: indexed, plain: plain)
  }

  static func figures(events count: Int, runs: Int, children: [String: [Child]], indexed: String, plain: String)
    -> Figures
  {
    let opens = children["open"] ?? []
    let keys = children["keys"] ?? []
    let saves = children["save"] ?? []
    func timed(_ name: String, _ runs: [Child], _ part: String) -> TimedRuns {
      TimedRuns(name: name, seconds: runs.map { $0.seconds[part] ?? 0 })
    }
    return Figures(
      events: count, runs: runs, indexes: indexes.map(\.name), plan: opens.first?.plan ?? "",
      keys: opens.first?.keys ?? 0, segmentsFromCheckpoint: opens.first?.segmentsFromCheckpoint ?? 0,
      timed: [
        timed("open, no key derivation", opens, "open"), timed("first count() of a city", opens, "count"),
        timed("first page: the city's 20 newest", opens, "page"), timed("in all", opens, "total"),
        timed("first save after open", saves, "save"), timed("second save", saves, "second save"),
      ],
      rssBytes: opens.map(\.rssBytes), heapBytes: opens.map(\.heapBytes), rssBeforeBytes: opens.map(\.rssBeforeBytes),
      keyDirectoryHeapBytes: keys.map(\.heapBytes), keyDirectoryRSSBytes: keys.map(\.rssBytes),
      diskIndexedBytes: ProcessFigures.fileBytes(indexed), diskPlainBytes: ProcessFigures.fileBytes(plain))
  }

  /// Writes `count` events of the seeded sequence into a new store with `indexes`, 2,000 a
  /// call, and closes it.
  ///
  /// - Returns: the answers an open must give: the count of the city, the ids of its 20 newest.
  static func build(_ path: String, events count: Int, indexes: [CaskIndex<BenchEvent>]) throws -> [String: String] {
    let store = try CaskStore(path: path, keys: try Profile.storeKeys(), options: Profile.fixedKeyOptions)
    let collection = store.collection(BenchEvent.self, named: "events", indexes: indexes)
    let queries = EventQueries(events: count)
    var generator = SeededGenerator(seed: seed)
    var inCity: [(date: Date, id: String)] = []
    var batch: [BenchEvent] = []
    for index in 0..<count {
      let event = BenchEvent.make(index, using: &generator)
      if event.city == queries.city { inCity.append((event.date, event.id)) }
      batch.append(event)
      if batch.count == 2_000 || index == count - 1 {
        try collection.save(contentsOf: batch)
        batch.removeAll(keepingCapacity: true)
      }
    }
    guard try collection.readyIndexes().count == indexes.count else {
      throw BenchError("cold: not every index was ready after the events were written")
    }
    try store.close()
    let newest = inCity.sorted { ($0.date, $0.id) > ($1.date, $1.id) }.prefix(queries.pageSize)
    return ["count": String(inCity.count), "page": newest.map(\.id).joined(separator: ",")]
  }

  /// SQLCipher with the same columns and indexes as the five-index store.
  static let diskPeer: PeerEngine = "sqlcipher+citydate"

  /// The disk of `count` events with five indexes (`queries --composite`'s), without indexes,
  /// and in SQLCipher (filled by its peer process, which also runs its queries once).
  static func measureDisk(events count: Int, in base: String) throws -> Disk {
    let scratch = try ScratchDirectory(in: base)
    defer { scratch.remove() }
    let indexes = CaskQuerySide.compositeIndexes
    printToStandardError("cold: disk of \(Number.grouped(count)) events, \(indexes.count) indexes and none")
    _ = try build("\(scratch.path)/indexed.cask", events: count, indexes: indexes)
    _ = try build("\(scratch.path)/plain.cask", events: count, indexes: [])
    let report = try PeerProcess.run(
      diskPeer.executable,
      PeerRequest(.queries, engine: diskPeer.name, size: count, directory: scratch.path, seed: seed))
    return Disk(
      events: count, indexes: indexes.map(\.name),
      indexedBytes: ProcessFigures.fileBytes("\(scratch.path)/indexed.cask"),
      plainBytes: ProcessFigures.fileBytes("\(scratch.path)/plain.cask"),
      sqlcipherBytes: ProcessFigures.fileBytes("\(scratch.path)/\(diskPeer.name)"), sqlcipherSetup: report.setup)
  }
}

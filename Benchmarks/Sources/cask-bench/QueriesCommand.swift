import CipherCask
import Foundation

/// `cask-bench queries`: indexed queries of a collection of events (title, date, venue, city,
/// country, attendees, two URLs) with indexes on city and date, beside the closure scan
/// (`fetch(where:sortedBy:limit:offset:)`) over the same collection, in the same run. Also
/// saves and updates with 0, 1 and 3 indexes, open time, and what an index costs per object
/// in memory and on disk. Each query's answer is checked against the scan's.
enum QueriesCommand: BenchCommand {
  static let name = "queries"
  static let abstract = "Indexed queries (equality, sorted pages, counts) beside the closure scan; index costs."
  static let usage = "cask-bench queries [--events N[,N...]] [--runs N] [--dir DIR]"
  static let options: [(flag: String, help: String)] = [
    ("--events N[,N...]", "Collection sizes (default 10000,100000)."),
    ("--runs N", "Timed runs of each indexed query (default 200; the scans run 3 times)."),
    ("--dir DIR", "Where the scratch stores go (default /tmp)."),
    ("--writes-only", "Only the saves and updates with 0, 1 and 3 indexes."),
    ("-h, --help", "Show help information."),
  ]

  struct Event: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var title: String
    var date: Date
    var venue: String
    var city: String
    var country: String
    var attendees: [String]
    var fbUrl: URL?
    var ticketUrl: URL?
  }

  static let cities = (0..<20).map { "City \($0)" }

  static func event(_ index: Int, _ generator: inout SystemRandomNumberGenerator) -> Event {
    let city = cities[Int.random(in: 0..<cities.count, using: &generator)]
    return Event(
      id: String(format: "e%07d", index), title: "Event number \(index) of the season",
      date: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 700_000_000...900_000_000, using: &generator))),
      venue: "Hall \(index % 97)", city: city, country: "Country \(index % 7)",
      attendees: (0..<Int.random(in: 0...6, using: &generator)).map { _ in
        "p\(Int.random(in: 0..<5_000, using: &generator))"
      },
      fbUrl: URL(string: "https://example.com/fb/\(index)"), ticketUrl: URL(string: "https://example.com/t/\(index)"))
  }

  static func run(arguments: [String]) throws {
    var options = Options(arguments)
    let sizesText = try options.value("--events") ?? "10000,100000"
    let runsText = try options.value("--runs") ?? "200"
    let base = try options.value("--dir") ?? "/tmp"
    let writesOnly = options.flag("--writes-only")
    try options.finish()
    if writesOnly {
      print(try writeCosts(in: base))
      return
    }
    let sizes = sizesText.split(separator: ",").compactMap { Int($0) }
    guard !sizes.isEmpty, sizes.allSatisfy({ $0 >= 2_000 }), let runs = Int(runsText), runs > 0 else {
      throw UsageError("--events takes sizes of at least 2000, --runs a positive number")
    }
    for size in sizes {
      let scratch = try ScratchDirectory(in: base)
      defer { scratch.remove() }
      print(try measure(events: size, runs: runs, in: scratch.path))
      print()
    }
    print(try writeCosts(in: base))
  }

  static func median(_ runs: Int, _ body: () throws -> Void) rethrows -> Double {
    var samples: [Double] = []
    for _ in 0..<runs { samples.append(try Stopwatch.seconds(body)) }
    return Statistics.median(samples)
  }

  static func directoryBytes(_ path: String) -> Int {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return names.reduce(0) { total, name in
      let size = (try? FileManager.default.attributesOfItem(atPath: "\(path)/\(name)"))?[.size] as? NSNumber
      return total + (size?.intValue ?? 0)
    }
  }

  static func measure(events count: Int, runs: Int, in directory: String) throws -> String {
    var generator = SystemRandomNumberGenerator()
    let objects = (0..<count).map { event($0, &generator) }
    let options = CaskStore.Options(durability: .never, autoCompaction: nil)
    let indexedPath = "\(directory)/indexed.cask"
    let plainPath = "\(directory)/plain.cask"
    printToStandardError("queries: writing \(count) events into an indexed and a plain store")
    for (path, indexed) in [(indexedPath, true), (plainPath, false)] {
      let store = try CaskStore(path: path, password: "bench", options: options)
      let events =
        indexed
        ? store.collection(Event.self, named: "events", indexes: [.index("city", \.city), .index("date", \.date)])
        : store.collection(Event.self, named: "events")
      var start = 0
      while start < count {
        try events.save(contentsOf: objects[start..<min(count, start + 2_000)])
        start += 2_000
      }
      try store.close()
    }
    let diskIndexed = directoryBytes(indexedPath)
    let diskPlain = directoryBytes(plainPath)

    ProcessMemory.releaseFreeMemory()
    let heapBeforeOpen = ProcessMemory.heapBytesInUse()
    var store: CaskStore?
    let openSeconds = try Stopwatch.seconds {
      store = try CaskStore(path: indexedPath, password: "bench", options: options)
    }
    guard let store else { throw BenchError("no store") }
    defer { try? store.close() }
    let heapAfterOpen = ProcessMemory.heapBytesInUse()
    let events = store.collection(
      Event.self, named: "events", indexes: [.index("city", \.city), .index("date", \.date)])
    let city = cities[3]
    var firstQuery = 0.0
    firstQuery = try Stopwatch.seconds {
      _ = try events.query().where(\.city, equals: city).count()
      _ = try events.query().sorted(by: \.date).limit(1).ids()
    }
    let heapAfterIndexes = ProcessMemory.heapBytesInUse()

    var table = Table([
      ("query (\(Number.grouped(Double(count))) events)", .left), ("index µs", .right), ("scan µs", .right),
      ("scan / index", .right), ("plan", .left),
    ])
    func row(
      _ label: String, _ query: CaskQuery<Event>, indexed: () throws -> [String], scan: () throws -> [String]
    ) throws {
      let expected = try scan()
      guard try indexed() == expected else { throw BenchError("\(label): the index's answer differs from the scan's") }
      let indexTime = try median(runs) { _ = try indexed() }
      let scanTime = try median(3) { _ = try scan() }
      table.append([
        label, Number.microseconds(indexTime), Number.microseconds(scanTime), Number.grouped(scanTime / indexTime),
        try query.explain(),
      ])
    }
    let equality = events.query().where(\.city, equals: city).limit(20)
    try row("equality, 20 objects", equality) {
      try equality.fetch().map(\.id)
    } scan: {
      try events.fetch(where: { $0.city == city }, limit: 20).map(\.id)
    }
    for offset in [0, 1_000] {
      let page = events.query().where(\.city, equals: city).sorted(by: \.date, ascending: false).offset(offset)
        .limit(20)
      try row("20 newest in a city, offset \(offset)", page) {
        try page.fetch().map(\.id)
      } scan: {
        try events.fetch(
          where: { $0.city == city }, sortedBy: { ($0.date, $0.id) > ($1.date, $1.id) }, limit: 20, offset: offset
        ).map(\.id)
      }
    }
    let counting = events.query().where(\.city, equals: city)
    try row("count() of a city", counting) {
      [String(try counting.count())]
    } scan: {
      [String(try events.filter { $0.city == city }.count)]
    }
    let perObject = Double(heapAfterIndexes - heapAfterOpen) / Double(count) / 2
    return table.render()
      + "\n\nOpen with 2 indexes: \(Number.fixed(openSeconds * 1000, 1)) ms (heap \(Number.grouped(Double(heapAfterOpen - heapBeforeOpen) / Double(count))) B per event, keys included); "
      + "first queries (in-memory entries built from the keys): \(Number.fixed(firstQuery * 1000, 1)) ms.\n"
      + "Memory: \(Number.grouped(perObject)) B per object per index for the in-memory entries "
      + "(heap after the first queries, over 2 indexes).\n"
      + "Disk: \(Number.grouped(Double(diskIndexed - diskPlain) / Double(count) / 2)) B per object per index "
      + "(\(Number.grouped(Double(diskIndexed))) B with 2 indexes, \(Number.grouped(Double(diskPlain))) B without; after the writes, before compaction).\n"
      + "Load average \(EngineCommand.loadAverage())."
  }

  /// Saves and updates with 0, 1 and 3 indexes, each into a fresh store of 10,000 events.
  static func writeCosts(in base: String) throws -> String {
    var generator = SystemRandomNumberGenerator()
    let base10k = (0..<10_000).map { event($0, &generator) }
    let fresh = (10_000..<12_000).map { event($0, &generator) }
    let indexSets: [(String, [CaskIndex<Event>])] = [
      ("0 indexes", []),
      ("1 index (city)", [.index("city", \.city)]),
      (
        "3 indexes (city, date, country)",
        [.index("city", \.city), .index("date", \.date), .index("country", \.country)]
      ),
      (
        "3 indexes (city, date, attendee each: 3 per event)",
        [.index("city", \.city), .index("date", \.date), .index("attendee", each: \.attendees)]
      ),
    ]
    var table = Table([
      ("writes into 10,000 events (.never)", .left), ("save µs", .right), ("update µs", .right),
      ("save / 0 indexes", .right),
    ])
    var baseline = 0.0
    for (label, indexes) in indexSets {
      let scratch = try ScratchDirectory(in: base)
      defer { scratch.remove() }
      let store = try CaskStore(
        path: "\(scratch.path)/w.cask", password: "bench", options: .init(durability: .never, autoCompaction: nil))
      defer { try? store.close() }
      let events = store.collection(Event.self, named: "events", indexes: indexes)
      try events.save(contentsOf: base10k)
      _ = try events.query().where(\.city, equals: cities[0]).count()
      let save = try Stopwatch.seconds { for event in fresh { try events.save(event) } } / Double(fresh.count)
      let update =
        try Stopwatch.seconds {
          for (index, var event) in fresh.enumerated() {
            event.city = cities[index % cities.count]
            event.date = event.date.addingTimeInterval(60)
            try events.save(event)
          }
        } / Double(fresh.count)
      if indexes.isEmpty { baseline = save }
      table.append([
        label, Number.microseconds(save), Number.microseconds(update), Number.fixed(save / baseline, 2),
      ])
    }
    return table.render()
  }
}

import CipherCask
import Foundation
import PeerKit

/// What one fresh process of `cask-bench cold` does (`--child PART --store DIR`), so that every
/// figure is of a process that has never touched the store: an app at launch.
extension ColdCommand {
  /// One process's figures, printed as JSON for the run that started it.
  struct Child: Codable {
    /// Seconds of each timed step: `open`, `count`, `page`, `total`; `save`, `second save`.
    var seconds: [String: Double] = [:]
    /// `open`: VmRSS and heap in use after the page, and VmRSS before the open (the process
    /// alone). `keys`: the growth of VmRSS and heap across the open.
    var rssBytes = 0
    var heapBytes = 0
    var rssBeforeBytes = 0
    /// `open`: the count and the page's ids, checked by the run; the page's plan.
    var answers: [String: String] = [:]
    var plan = ""
    var keys = 0
    var segmentsFromCheckpoint = 0
  }

  /// Runs `part` on the store at `path` (`events` is the size it was built with) and returns
  /// its figures as JSON.
  static func child(_ part: String, store path: String, events count: Int) throws -> String {
    var figures = Child()
    ProcessMemory.releaseFreeMemory()
    let rssBefore = ProcessFigures.currentRSS()
    let heapBefore = ProcessMemory.heapBytesInUse()
    var options = Profile.fixedKeyOptions
    options.createIfMissing = false
    let (store, open) = try Stopwatch.timed {
      try CaskStore(path: path, keys: try Profile.storeKeys(), options: options)
    }
    defer { try? store.close() }
    let queries = EventQueries(events: count)
    switch part {
    case "keys":
      figures.rssBytes = ProcessFigures.currentRSS() - rssBefore
      figures.heapBytes = ProcessMemory.heapBytesInUse() - heapBefore
    case "save":
      let events = store.collection(BenchEvent.self, named: "events", indexes: indexes)
      let saved = Array(queries.savedEvents(seed: seed).prefix(2))
      figures.seconds["save"] = try Stopwatch.seconds { try events.save(saved[0]) }
      figures.seconds["second save"] = try Stopwatch.seconds { try events.save(saved[1]) }
      // The store keeps its events for the next process.
      for event in saved { _ = try events.delete(id: event.id) }
    default:
      var answers: [String: String] = [:]
      // Declaring the collection is part of the first query's time, as at an app's launch.
      let start = ProcessFigures.now()
      let reader = CaskEventStore(store.collection(BenchEvent.self, named: "events", indexes: indexes))
      answers["count"] = String(try reader.count(city: queries.city))
      let count = ProcessFigures.seconds(since: start)
      let page = try Stopwatch.seconds {
        let newest = try reader.newest(city: queries.city, offset: 0, limit: queries.pageSize)
        answers["page"] = newest.map(\.id).joined(separator: ",")
      }
      figures.rssBytes = ProcessFigures.currentRSS()
      figures.rssBeforeBytes = rssBefore
      figures.heapBytes = ProcessMemory.heapBytesInUse()
      figures.seconds = ["open": open, "count": count, "page": page, "total": open + count + page]
      figures.answers = answers
      figures.plan = try reader.query("page0", queries)?.explain() ?? ""
      let stats = store.stats()
      figures.keys = stats.keys
      figures.segmentsFromCheckpoint = stats.recovery.segmentsFromCheckpoint
    }
    return try PeerMain.json(figures)
  }
}

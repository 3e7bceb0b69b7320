import Foundation
import PeerKit

/// The generated tables of Docs/BENCHMARKS.md, one function per part. Every figure comes from a
/// results file; a part with no results says so rather than keeping old figures.
extension ReportCommand {
  static let noResults = "No results file has these figures yet."

  static func milliseconds(_ seconds: Double?) -> String {
    seconds.map { Number.fixed($0 * 1e3, 1) } ?? "—"
  }

  static func load(_ values: [Double]) -> String {
    values.first.map { Number.fixed($0, 1) } ?? "n/a"
  }

  static func sourcesTable(_ results: ResultsSet) -> String {
    let table = Table(
      [("file", .left), ("command", .left), ("version", .left), ("commit", .left), ("load, start → end", .right)],
      rows: results.sources.map { source in
        let header = source.header
        let commit = String(header.commit.prefix(12)) + (header.commit.hasSuffix("+dirty") ? "+dirty" : "")
        return [
          "`\(source.file)`", "`\(header.command)`", header.version, commit,
          "\(load(header.loadAtStart)) → \(load(header.loadAtEnd))",
        ]
      })
    let machines = Set(results.sources.map(\.header.machine.summary)).sorted()
    return table.render() + "\n\nMachine: " + machines.joined(separator: "; ") + "."
  }

  static func codecTable(_ results: ResultsSet) -> String {
    guard let codec = results.codec?.figures else { return noResults }
    let table = Table(
      [
        ("message", .left), ("format", .left), ("operation", .left), ("MB/s", .right), ("bound MB/s", .right),
        ("÷ bound", .right),
      ],
      rows: codec.throughput.map { row in
        [
          row.message, row.format, row.operation, Number.grouped(row.megabytesPerSecond),
          row.boundMegabytesPerSecond.map { Number.grouped($0) } ?? "—", row.ratio.map { Number.fixed($0, 2) } ?? "—",
        ]
      })
    let rates = Table(
      [("1 KiB messages", .left), ("messages/s", .right)],
      rows: codec.messageRates.map { [$0.workload, Number.grouped($0.messagesPerSecond)] })
    return table.render() + "\n\n" + rates.render()
  }

  static func engineTables(_ results: ResultsSet) -> String {
    guard !results.engine.isEmpty else { return noResults }
    var table = Table([
      ("keys", .right), ("operation", .left), ("ops/s", .right), ("p50 µs", .right), ("p99 µs", .right),
      ("slowest ms", .right),
    ])
    var opens = Table([
      ("keys", .right), ("open with hints ms", .right), ("open without hints ms", .right), ("segments", .right),
      ("index B/key (RSS)", .right), ("after malloc_trim", .right), ("heap", .right),
    ])
    for size in results.engine.flatMap(\.figures.sizes) {
      let keys = Number.grouped(size.keys)
      for operation in size.operations {
        table.append([
          keys, operation.operation, Number.grouped(operation.opsPerSecond), Number.microseconds(operation.p50),
          Number.microseconds(operation.p99), Number.fixed(operation.max * 1e3, 2),
        ])
      }
      let memory = size.inlineKeyMemory
      opens.append([
        keys, milliseconds(size.openWithHints.medianSeconds), milliseconds(size.openWithoutHints.medianSeconds),
        String(size.openWithHints.segments), Number.fixed(memory.rssBytesPerKey, 1),
        Number.fixed(memory.rssTrimmedBytesPerKey, 1), Number.fixed(memory.heapBytesPerKey, 1),
      ])
    }
    var out = table.render() + "\n\n" + opens.render()
    if let durable = results.engineDurable?.figures {
      var puts = Table([("durable puts", .left), ("ops/s", .right), ("p50 µs", .right), ("p99 µs", .right)])
      puts.append([
        "the disk alone: one record appended and fdatasync'd", Number.grouped(durable.syncProbe.opsPerSecond),
        Number.microseconds(durable.syncProbe.p50), "—",
      ])
      for operation in durable.durable {
        puts.append([
          "\(operation.writers) writer\(operation.writers == 1 ? "" : "s")", Number.grouped(operation.opsPerSecond),
          Number.microseconds(operation.p50), Number.microseconds(operation.p99),
        ])
      }
      out += "\n\n" + puts.render()
    }
    return out
  }

  /// Per size, CipherCask ÷ each peer in every workload and open, and each engine's disk use;
  /// then the durable puts.
  static func peersTables(_ report: PeersCommand.Report) -> String {
    let peers = report.settings.peers
    let cask = PeersCommand.cipherCask.name
    var parts: [String] = []
    for size in report.sizes {
      guard let ours = size.engine(cask) else { continue }
      var table = Ratio.table(
        "\(Number.grouped(size.keys)) keys, \(size.runs) run\(size.runs == 1 ? "" : "s")", ours: ours,
        peers: peers.map { ($0, size.engine($0)) }, rows: PeersCommand.throughputWorkloads.map { ($0, $0) })
      let open = openWithoutDerivation(ours)
      table.append(
        ["open, derivation left out (ms; ratio: theirs ÷ ours)", milliseconds(open)]
          + peers.map { peer in openRatio(ours, size.engine(peer)).map(Ratio.text) ?? "—" })
      var space = Table([
        ("\(Number.grouped(size.keys)) keys", .left), ("disk ÷ data after overwrite", .right),
        ("after compaction", .right), ("compaction", .left), ("peak RSS MiB", .right),
      ])
      for engine in size.engines {
        space.append([
          engine.engine, engine.amplificationAfterOverwrite.map { Number.fixed($0, 2) } ?? "—",
          // A size run without the compact workload has no figure after it.
          engine.workload(KVWorkload.compact) == nil
            ? "—" : engine.amplificationAfterCompaction.map { Number.fixed($0, 2) } ?? "—",
          engine.workload(KVWorkload.compact) == nil ? "—" : engine.compaction,
          Number.fixed(Double(engine.peakRSSBytes) / Double(1 << 20), 1),
        ])
      }
      parts.append(table.render() + "\n\n" + space.render())
    }
    if let ours = report.durable.named(cask) {
      let table = Ratio.table(
        "durable puts (every put synced)", ours: ours, peers: peers.map { ($0, report.durable.named($0)) },
        rows: [("1 writer", KVWorkload.durable1), ("8 writers", KVWorkload.durable8)])
      parts.append(table.render())
    }
    return parts.joined(separator: "\n\n")
  }

  /// A peers engine's open plus one get, with keys derived before (`peers` derives them
  /// once per process, when the store is made), or `nil` when it was not measured. A results
  /// file from before that timed the derivation apart (`open-key-derivation`) and included it
  /// in the open: the difference then, or `nil` when the derivation took longer than the whole
  /// open (a noisy single run), since no difference can be read from the two.
  static func openWithoutDerivation(_ engine: GatheredEngine) -> Double? {
    guard let open = engine.workload(KVWorkload.open)?.medianSeconds else { return nil }
    guard let derivation = engine.workload("open-key-derivation")?.medianSeconds else { return open }
    return open > derivation ? open - derivation : nil
  }

  /// A peer's open over CipherCask's, both without the derivation (above 1×: CipherCask opens
  /// sooner), or `nil` when either is missing.
  static func openRatio(_ ours: GatheredEngine?, _ theirs: GatheredEngine?) -> Double? {
    guard let mine = ours.flatMap(openWithoutDerivation), let their = theirs.flatMap(openWithoutDerivation) else {
      return nil
    }
    return their / Swift.max(mine, 1e-6)
  }

  /// CipherCask ÷ each collection peer in every workload, and the isolation rule's figure.
  static func objectsTable(_ report: ObjectsCommand.Report) -> String {
    let table = Ratio.table(
      "\(Number.grouped(report.settings.objects)) objects, \(report.settings.runs) runs",
      ours: report.engines.named(ObjectsCommand.cipherCask.name),
      peers: ObjectsCommand.peers(report).map { ($0.engine, $0) }, rows: ObjectsCommand.workloads.map { ($0, $0) })
    var text = table.render()
    if let isolation = report.isolation {
      text +=
        "\n\n`all()` of \(Number.grouped(isolation.objects)) objects in a store of "
        + "\(Number.grouped(isolation.storeKeys)) keys ÷ the same collection alone: "
        + "\(Number.fixed(isolation.ratio, 2))× (\(milliseconds(isolation.crowdedMedian)) ms ÷ "
        + "\(milliseconds(isolation.aloneMedian)) ms)."
    }
    return text
  }

  /// Each query's time for CipherCask, the scan and the SQL peers, and theirs ÷ CipherCask's.
  static func queriesTable(_ figures: QueriesCommand.Results) -> String {
    let engines = queryEngines.dropFirst()
    var table = Table(
      [("\(Number.grouped(figures.events)) events", .left), ("CipherCask µs", .right)]
        + engines.map { ("\($0) µs", .right) } + engines.map { ("\($0) ÷ CC", .right) } + [("plan", .left)])
    for query in figures.queries {
      let ours = QueriesCommand.seconds(of: query, "ciphercask")
      let theirs = engines.map { QueriesCommand.seconds(of: query, $0) }
      table.append(
        [query.label, ours.map(Number.microseconds) ?? "—"] + theirs.map { $0.map(Number.microseconds) ?? "—" }
          + theirs.map { value in Ratio.text(value.flatMap { v in ours.map { v / Swift.max($0, 1e-12) } }) }
          + [query.plan.replacingOccurrences(of: "|", with: "\\|")])
    }
    let fill = figures.fillSeconds.sorted { $0.key < $1.key }
      .map { "\($0.key) \(Number.microseconds($0.value)) µs" }.joined(separator: ", ")
    return table.render()
      + "\n\nMedians over \(figures.rounds) rounds of \(figures.runs) runs (scans: \(figures.scanRuns))."
      + " Fill, per event: \(fill). Open with \(figures.indexes) indexes: \(milliseconds(figures.openSeconds)) ms;"
      + " index entries: \(Number.fixed(figures.entriesPerEvent, 2)) per event,"
      + " \(Number.grouped(figures.heapBytesPerEntry)) B of memory and \(Number.grouped(figures.diskBytesPerEntry))"
      + " B of disk each."
      + (figures.writeCosts.map { "\n\n" + QueriesCommand.writeCostsTable($0) } ?? "")
  }

  static func importTable(_ results: ResultsSet) -> String {
    guard !results.imports.isEmpty else { return noResults }
    var table = Table([
      ("path", .left), ("objects", .right), ("seconds", .right), ("objects/s", .right), ("per CPU second", .right),
      ("peak growth MiB", .right), ("how", .left),
    ])
    for file in results.imports {
      for path in file.figures {
        table.append([
          path.path, Number.grouped(path.objects), Number.fixed(path.seconds, 2),
          Number.grouped(Double(path.objects) / Swift.max(path.seconds, 1e-9)),
          path.cpuSeconds.map { Number.grouped(Double(path.objects) / Swift.max($0, 1e-9)) } ?? "—",
          path.peakGrowthBytes.map { Number.fixed(Double($0) / Double(1 << 20), 1) } ?? "—", path.note,
        ])
      }
    }
    return table.render()
  }

  static func codersTable(_ results: ResultsSet) -> String {
    guard let report = results.coders?.figures else { return noResults }
    func yes(_ value: Bool) -> String { value ? "yes" : "**no**" }
    return Table(
      [
        ("coder", .left), ("encode/s", .right), ("decode/s", .right), ("round trip/s", .right), ("bytes", .right),
        ("exact", .left), ("reads old objects after a field is added / removed", .left),
      ],
      rows: report.coders.map { coder in
        [
          coder.coder + (coder.isDefault ? " (default)" : ""), Number.grouped(coder.encodePerSecond),
          Number.grouped(coder.decodePerSecond), Number.grouped(coder.roundTripPerSecond),
          Number.grouped(coder.meanBytes), yes(coder.roundTripsExactly),
          "\(yes(coder.readsOldAfterOptionalFieldAdded)) / \(yes(coder.readsOldAfterFieldRemoved))",
        ]
      }
    ).render()
  }

  static func outboxTable(_ results: ResultsSet) -> String {
    guard let report = results.outbox?.figures, !report.backlogs.isEmpty else { return noResults }
    var table = Table([
      ("backlog", .right), ("queue, µs a change", .right), ("of it CPU", .right), ("push, ms a change", .right),
      ("of it CPU", .right), ("sent", .right), ("complete", .left),
    ])
    for backlog in report.backlogs {
      let changes = Double(Swift.max(backlog.backlog, 1))
      let sent = Double(Swift.max(backlog.sent, 1))
      table.append([
        Number.grouped(backlog.backlog), Number.microseconds(backlog.enqueueSeconds / changes),
        Number.microseconds(backlog.enqueueCPUSeconds / changes), Number.fixed(backlog.pushSeconds / sent * 1e3, 2),
        Number.fixed(backlog.pushCPUSeconds / sent * 1e3, 2), Number.grouped(backlog.sent),
        backlog.complete ? "yes" : "**no** (stopped at the push limit)",
      ])
    }
    return table.render()
  }

  static func timedTable(_ title: String, _ rows: [TimedRuns], unit: Double, decimals: Int) -> Table {
    Table(
      [(title, .left), ("runs", .right), ("median", .right), ("each run", .left)],
      rows: rows.map { row in
        [
          row.name, String(row.seconds.count), Number.fixed(row.median * unit, decimals),
          row.seconds.map { Number.fixed($0 * unit, decimals) }.joined(separator: ", "),
        ]
      })
  }

  static func recoveryTables(_ results: ResultsSet) -> String {
    guard let figures = results.recovery?.figures else { return noResults }
    let damaged = figures.opens.count > 1 ? figures.opens[1].median : 0
    return timedTable(
      "read-only open of a \(figures.segmentMiB) MiB segment without its hint, s", figures.opens, unit: 1, decimals: 3
    )
    .render()
      + "\n\nThe damaged open crosses its \(figures.damageMiB) MiB at "
      + "\(damaged > 0 ? Number.fixed(Double(figures.damageMiB) / damaged, 0) : "—") MiB/s or more.\n\n"
      + timedTable("open of an empty store, by header, ms", figures.keyDerivations, unit: 1e3, decimals: 1).render()
  }

  static func backupTable(_ figures: BackupCommand.Figures) -> String {
    let megabytes = Number.fixed(Double(figures.storeBytes) / 1e6, 1)
    var table = Table([
      ("\(Number.grouped(figures.keys)) keys, \(megabytes) MB", .left), ("median s", .right),
      ("MB/s", .right), ("÷ cp -r + sync (time)", .right),
    ])
    let copy = figures.copies.first?.median ?? 0
    for row in figures.copies {
      table.append([
        row.name, Number.fixed(row.median, 3),
        Number.fixed(Double(figures.storeBytes) / Swift.max(row.median, 1e-9) / 1e6, 0),
        copy > 0 ? Number.fixed(row.median / copy, 2) + "×" : "—",
      ])
    }
    return table.render()
  }
}

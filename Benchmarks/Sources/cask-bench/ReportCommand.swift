import Foundation
import PeerKit

/// `cask-bench report`: Docs/BENCHMARKS.md's tables and the charts under Docs/charts/, drawn
/// from the results files alone, so that no figure in the document is typed by hand. The same
/// results give the same bytes, which is what lets CI regenerate both and fail on a difference.
///
/// The document keeps its hand-written prose; each generated part sits between a line
/// `<!-- generated: NAME -->` and a line `<!-- end generated: NAME -->`, and only that part is
/// replaced.
enum ReportCommand: BenchCommand {
  static let name = "report"
  static let abstract = "Docs/BENCHMARKS.md's tables and Docs/charts/*.svg from the results files alone."
  static let options: [(flag: String, help: String)] = [
    ("--results DIR", "The results files to read (default Benchmarks/results)."),
    ("--doc FILE", "The document whose generated parts are replaced (default Docs/BENCHMARKS.md)."),
    ("--charts DIR", "Where the SVG charts go (default Docs/charts)."),
  ]

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let folder = try options.value("--results") ?? ResultsDestination.defaultFolder
    let doc = try options.value("--doc") ?? ResultsDestination.repository + "/Docs/BENCHMARKS.md"
    let charts = try options.value("--charts") ?? ResultsDestination.repository + "/Docs/charts"
    try options.finish()
    let results = try ResultsSet.load(folder)
    guard !results.sources.isEmpty else { throw BenchError("no results files in '\(folder)'") }

    let text = try explained("cannot read '\(doc)'") { try String(contentsOfFile: doc, encoding: .utf8) }
    try writeAtomically(Data(try splice(text, sections: sections(results)).utf8), to: doc)
    try explained("cannot create '\(charts)'") {
      try FileManager.default.createDirectory(atPath: charts, withIntermediateDirectories: true)
    }
    printToStandardError("report: wrote \(doc) from \(results.sources.count) results files")
    for written in try drawCharts(results, in: charts) {
      printToStandardError("report: wrote \(written)")
    }
  }

  /// The generated parts, by the name their markers carry.
  static func sections(_ results: ResultsSet) -> [String: String] {
    [
      "sources": sourcesTable(results),
      "targets": targetsTable(results),
      "codec": codecTable(results),
      "engine": engineTables(results),
      "index": each(results.indexes, IndexCommand.table),
      "peers": results.mergedPeers.map(peersTables) ?? noResults,
      "objects": each(results.objects, objectsTable),
      "queries": each(results.queries, queriesTable),
      "cold": each(results.colds, ColdCommand.table),
      "import": importTable(results),
      "coders": codersTable(results),
      "outbox": outboxTable(results),
      "sync": each(results.syncs, SyncCommand.render),
      "recovery": recoveryTables(results),
      "backup": each(results.backups, backupTable),
    ]
  }

  /// One table (or a few) per results file, or `noResults` when there is none.
  static func each<Figures>(_ files: [ResultsFile<Figures>], _ table: (Figures) -> String) -> String {
    files.isEmpty ? noResults : files.map { table($0.figures) }.joined(separator: "\n\n")
  }

  /// `text` with the part between each pair of markers replaced by its section.
  static func splice(_ text: String, sections: [String: String]) throws -> String {
    var out: [Substring] = []
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false)[...]
    var used: Set<String> = []
    while let line = lines.popFirst() {
      out.append(line)
      guard line.hasPrefix("<!-- generated: "), line.hasSuffix(" -->") else { continue }
      let name = String(line.dropFirst("<!-- generated: ".count).dropLast(" -->".count))
      guard let section = sections[name] else { throw BenchError("the document has a part '\(name)' no results make") }
      let end = "<!-- end generated: \(name) -->"
      guard let endIndex = lines.firstIndex(where: { $0 == end }) else {
        throw BenchError("the document's part '\(name)' has no line '\(end)'")
      }
      out.append(Substring(section))
      out.append(lines[endIndex])
      lines = lines[(endIndex + 1)...]
      used.insert(name)
    }
    if let missing = sections.keys.sorted().first(where: { !used.contains($0) }) {
      throw BenchError("the document has no '<!-- generated: \(missing) -->' part")
    }
    return out.joined(separator: "\n")
  }

  /// Draws every chart the results have figures for.
  ///
  /// - Returns: the files written.
  static func drawCharts(_ results: ResultsSet, in folder: String) throws -> [String] {
    var written: [String] = []
    func draw(_ name: String, _ svg: String?) throws {
      guard let svg else { return }
      written.append(folder + "/" + name + ".svg")
      try writeAtomically(Data(svg.utf8), to: folder + "/" + name + ".svg")
    }
    let faster = "ops/s (above 1×: CipherCask is faster)"
    try draw(
      "peers", results.mergedPeers.map { RatioChart.svg(RatioChart.panels($0), title: "CipherCask ÷ peer, " + faster) })
    let objects = results.objects.map { ObjectsCommand.panel($0.figures) }
    try draw(
      "objects", objects.isEmpty ? nil : RatioChart.svg(objects, title: "CipherCask collections ÷ peer, " + faster))
    let queries = results.queries.map(queriesPanel)
    try draw("queries", queries.isEmpty ? nil : RatioChart.svg(queries, title: "Time of one query (lower is faster)"))
    let open = openSeries(results)
    let openTitle = "Open time against store size (lower is faster)"
    try draw("open", open.isEmpty ? nil : LineChart.svg(open, title: openTitle, xLabel: "keys in the store"))
    return written
  }

  /// Engines in the order the query chart and table show them.
  static let queryEngines = ["ciphercask", "scan", "sqlcipher", "sqlite+rncryptor"]

  static func queriesPanel(_ file: ResultsFile<QueriesCommand.Results>) -> RatioChart.Panel {
    let queries = file.figures.queries
    return RatioChart.Panel(
      title: "\(Number.grouped(file.figures.events)) events", groups: queries.map(\.name),
      series: queryEngines,
      values: queries.map { query in queryEngines.map { QueriesCommand.seconds(of: query, $0) } }, unit: .seconds)
  }

  /// Open time of each peers engine (password derivation left out, as `peers` times it) and of
  /// the engine run's opens with and without hints, by store size.
  static func openSeries(_ results: ResultsSet) -> [LineChart.Series] {
    var series: [LineChart.Series] = []
    if let peers = results.mergedPeers {
      let engines = [PeersCommand.cipherCask.name] + peers.settings.peers
      for engine in engines {
        let points = peers.sizes.compactMap { size -> (size: Double, seconds: Double)? in
          guard let open = size.engine(engine).flatMap(openWithoutDerivation) else { return nil }
          return (Double(size.keys), Swift.max(open, 1e-6))
        }
        if !points.isEmpty {
          series.append(LineChart.Series(name: "peers: \(engine), derivation left out", points: points))
        }
      }
    }
    for (label, path) in [
      ("with hints", \EngineCommand.SizeFigures.openWithHints), ("without hints", \.openWithoutHints),
    ] {
      let points = results.engine.flatMap(\.figures.sizes).map {
        (size: Double($0.keys), seconds: $0[keyPath: path].medianSeconds)
      }
      if !points.isEmpty {
        series.append(LineChart.Series(name: "engine: open \(label), derivation included", points: points))
      }
    }
    return series
  }
}

extension QueriesCommand {
  /// The median seconds of one query for `engine` (`ciphercask`, `scan` or a peer's name).
  static func seconds(of query: QueryResult, _ engine: String) -> Double? {
    let rounds: [Double]?
    switch engine {
    case "ciphercask": rounds = query.cipherCask
    case "scan": rounds = query.scan
    default: rounds = query.peers[engine]
    }
    guard let rounds, !rounds.isEmpty else { return nil }
    return Statistics.median(rounds)
  }
}

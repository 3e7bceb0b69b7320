import Foundation

/// The targets table: one row per target, with the latest figure the results hold for it. The
/// codec's and the engine's targets are the ones their runs wrote; the peers' and the objects'
/// are worked out again from every size's file; the queries' and the import's are set here.
extension ReportCommand {
  struct RecordedTargets: Decodable {
    let targets: [Target]
  }

  static func targets(_ results: ResultsSet) -> [Target] {
    var targets: [Target] = []
    func recorded(_ file: String, at: String) {
      guard let data = results.sources.first(where: { $0.file == file })?.data,
        let decoded = try? JSONDecoder().decode(ResultsFile<RecordedTargets>.self, from: data)
      else { return }
      for target in decoded.figures.targets {
        targets.append(
          Target(
            target.target, at: at, required: target.required, atMost: target.atMost ?? false,
            measured: target.measured))
      }
    }
    for source in results.sources where source.header.subcommand == CodecCommand.name {
      recorded(source.file, at: "codec")
    }
    for file in results.engine + (results.engineDurable.map { [$0] } ?? []) {
      let at = file.size.map { Number.grouped($0) + " keys" } ?? "durable puts"
      recorded("engine-" + (file.size.map(String.init) ?? "durable") + ".json", at: at)
    }
    // The engine writes one file per size, so the growth of get latency between two sizes is
    // worked out here, from both files.
    let growth = EngineCommand.latencyGrowth(
      results.engine.flatMap(\.figures.sizes), at: "engine-10000.json, engine-1000000.json")
    if growth.measured != nil { targets.append(growth) }
    if let peers = results.mergedPeers { targets += PeersCommand.targets(peers) }
    for file in results.objects { targets += file.figures.targets }
    for file in results.queries { targets += queryTargets(file.figures) }
    targets += ColdCommand.targets(results.colds)
    for file in results.imports { targets += importTargets(file.figures) }
    for file in results.syncs { targets += SyncCommand.targets(file.figures) }
    if let scrypt = results.recovery?.figures.keyDerivations.first(where: { $0.name.hasPrefix("scrypt") }) {
      targets.append(
        Target(
          "open of an empty store with the default scrypt header, ms", at: "recovery", required: 250, atMost: true,
          measured: scrypt.median * 1e3))
    }
    // One row per target: a later file's measured figure replaces an earlier one, and a target
    // a file could not measure (a size it did not run) never hides one another file measured.
    var order: [String] = []
    var latest: [String: Target] = [:]
    for target in targets {
      if latest[target.target] == nil { order.append(target.target) }
      if target.measured != nil || latest[target.target]?.measured == nil { latest[target.target] = target }
    }
    return order.compactMap { latest[$0] }
  }

  static func queryTargets(_ figures: QueriesCommand.Results) -> [Target] {
    let at = "\(Number.grouped(figures.events)) events"
    var targets: [Target] = []
    for name in ["page0", "page1000"] {
      guard let query = figures.queries.first(where: { $0.name == name }) else { continue }
      let ours = QueriesCommand.seconds(of: query, "ciphercask")
      func ratio(_ engine: String) -> Double? {
        guard let theirs = QueriesCommand.seconds(of: query, engine), let ours else { return nil }
        return theirs / Swift.max(ours, 1e-12)
      }
      targets.append(
        Target("\(query.label): the closure scan ÷ CipherCask", at: at, required: 1_000, measured: ratio("scan")))
      targets.append(
        Target("\(query.label): SQLCipher ÷ CipherCask", at: at, required: 1, measured: ratio("sqlcipher")))
    }
    if let count = figures.queries.first(where: { $0.name == "count" }) {
      targets.append(
        Target(
          "count() of an indexed equality, ms", at: at, required: 1, atMost: true,
          measured: QueriesCommand.seconds(of: count, "ciphercask").map { $0 * 1e3 }))
    }
    if let indexed = figures.diskBytesIndexed, let plain = figures.diskBytesPlain {
      targets.append(
        Target(
          "disk with \(figures.indexes) indexes ÷ without", at: at, required: 2.5, atMost: true,
          measured: Double(indexed) / Double(Swift.max(plain, 1))))
    }
    if let costs = figures.writeCosts {
      let at = "10,000 events"
      targets.append(
        Target(
          "save with 3 indexes ÷ without, CPU", at: at, required: 2, atMost: true,
          measured: QueriesCommand.saveCPURatio(costs, "3")))
      targets.append(
        Target(
          "save with 3 indexes, one each: of 3 elements ÷ without, CPU", at: at, required: 2.5, atMost: true,
          measured: QueriesCommand.saveCPURatio(costs, "each")))
    }
    return targets
  }

  static func importTargets(_ paths: [ImportCommand.Measured]) -> [Target] {
    guard let library = paths.first(where: { $0.path == "importJSON(contentsOf:)" }) else { return [] }
    let at = "\(Number.grouped(library.objects)) events"
    var targets = [
      Target(
        "importJSON(contentsOf:), objects/s", at: at, required: 60_000,
        measured: Double(library.objects) / Swift.max(library.seconds, 1e-9)),
      Target(
        "importJSON(contentsOf:), peak memory growth, MiB", at: at, required: 256, atMost: true,
        measured: library.peakGrowthBytes.map { Double($0) / Double(1 << 20) }),
    ]
    if let binary = paths.first(where: { $0.path == "cask import" }) {
      targets.append(
        Target(
          "cask import ÷ importJSON(contentsOf:), time", at: at, required: 1.2, atMost: true,
          measured: binary.seconds / Swift.max(library.seconds, 1e-9)))
    }
    return targets
  }

  static func targetsTable(_ results: ResultsSet) -> String {
    let targets = targets(results)
    guard !targets.isEmpty else { return noResults }
    var table = Table([
      ("target", .left), ("at", .left), ("required", .right), ("measured", .right), ("met", .left),
    ])
    func format(_ value: Double) -> String {
      value >= 1_000 ? Number.grouped(value) : Number.fixed(value, 2)
    }
    for target in targets {
      table.append([
        // A target no file measured has no place to name.
        target.target, target.measured == nil ? "—" : target.at ?? "—",
        (target.atMost == true ? "≤ " : "≥ ") + format(target.required),
        target.measured.map(format) ?? "not measured", target.met.map { $0 ? "yes" : "**no**" } ?? "—",
      ])
    }
    return table.render()
  }
}

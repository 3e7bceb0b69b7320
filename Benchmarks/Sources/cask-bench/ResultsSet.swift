import Foundation

/// Every results file of a folder, decoded: what `cask-bench report` draws from. Files of an
/// older format version (`engine-format2-*`) and of the composite-index query run are read for
/// the list of sources only.
struct ResultsSet {
  /// A file's name and its header (everything but the figures).
  struct Source {
    let file: String
    let header: ResultsFile<Skipped>
    /// The whole file, for the parts only some readers decode (the recorded targets).
    let data: Data
  }

  /// Decodes any figures to nothing, for reading a file's header alone.
  struct Skipped: Decodable {
    init(from decoder: any Decoder) throws {}
  }

  var sources: [Source] = []
  /// By store size, smallest first.
  var peers: [ResultsFile<PeersCommand.Report>] = []
  var peersDurable: ResultsFile<PeersCommand.Report>?
  var engine: [ResultsFile<EngineCommand.Report>] = []
  var engineDurable: ResultsFile<EngineCommand.Report>?
  var codec: ResultsFile<CodecCommand.Report>?
  var objects: [ResultsFile<ObjectsCommand.Report>] = []
  var queries: [ResultsFile<QueriesCommand.Results>] = []
  var colds: [ResultsFile<ColdCommand.Figures>] = []
  var imports: [ResultsFile<[ImportCommand.Measured]>] = []
  var coders: ResultsFile<CodersCommand.Report>?
  var outbox: ResultsFile<OutboxCommand.Report>?
  var syncs: [ResultsFile<SyncCommand.Report>] = []
  var indexes: [ResultsFile<IndexCommand.Figures>] = []
  var recovery: ResultsFile<RecoveryCommand.Figures>?
  var backups: [ResultsFile<BackupCommand.Figures>] = []

  /// Reads every `*.json` in `folder`, in name order.
  ///
  /// - Throws: `BenchError` naming a file that cannot be read or decoded.
  static func load(_ folder: String) throws -> ResultsSet {
    let names: [String]
    do {
      names = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }.sorted()
    } catch {
      throw BenchError("cannot list the results folder '\(folder)': \(error.localizedDescription)")
    }
    var set = ResultsSet()
    for name in names {
      let data: Data
      do {
        data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
      } catch {
        throw BenchError("cannot read '\(folder)/\(name)': \(error.localizedDescription)")
      }
      try set.add(name, data: data, folder: folder)
    }
    return set
  }

  /// Decodes one results file, `name` in `folder`, into its place, keeping every list in order.
  /// The files of an older format version and of the composite-index query run count only as
  /// sources, unless `everyKind` (a run printing what it wrote).
  ///
  /// - Throws: `BenchError` when it is not a results file of its subcommand.
  mutating func add(_ name: String, data: Data, folder: String, everyKind: Bool = false) throws {
    func decode<Figures: Decodable>(_ type: Figures.Type) throws -> ResultsFile<Figures> {
      do {
        return try JSONDecoder().decode(ResultsFile<Figures>.self, from: data)
      } catch {
        throw BenchError("'\(folder)/\(name)' is not a \(type) results file: \(error)")
      }
    }
    let header = try decode(Skipped.self)
    sources.append(Source(file: name, header: header, data: data))
    sources.sort { $0.file < $1.file }
    let stem = String(name.dropLast(".json".count))
    switch header.subcommand {
    case PeersCommand.name:
      let file = try decode(PeersCommand.Report.self)
      if stem.hasSuffix("-durable") { peersDurable = file } else { peers.append(file) }
    case EngineCommand.name where everyKind || !stem.contains("-format"):
      let file = try decode(EngineCommand.Report.self)
      if stem.hasSuffix("-durable") { engineDurable = file } else { engine.append(file) }
    case CodecCommand.name:
      codec = try decode(CodecCommand.Report.self)
    case ObjectsCommand.name:
      objects.append(try decode(ObjectsCommand.Report.self))
    case QueriesCommand.name where everyKind || !stem.contains("-composite"):
      queries.append(try decode(QueriesCommand.Results.self))
    case ColdCommand.name:
      colds.append(try decode(ColdCommand.Figures.self))
    case ImportCommand.name:
      imports.append(try decode([ImportCommand.Measured].self))
    case CodersCommand.name:
      coders = try decode(CodersCommand.Report.self)
    case OutboxCommand.name:
      outbox = try decode(OutboxCommand.Report.self)
    case IndexCommand.name:
      indexes.append(try decode(IndexCommand.Figures.self))
    case SyncCommand.name:
      syncs.append(try decode(SyncCommand.Report.self))
    case RecoveryCommand.name:
      recovery = try decode(RecoveryCommand.Figures.self)
    case BackupCommand.name:
      backups.append(try decode(BackupCommand.Figures.self))
    default:
      break
    }
    peers.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    engine.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    objects.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    queries.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    colds.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    imports.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    backups.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    syncs.sort { ($0.size ?? 0, $0.figures.backend) < ($1.size ?? 0, $1.figures.backend) }
    indexes.sort { ($0.size ?? 0) < ($1.size ?? 0) }
  }

  /// Every peers size in one report, with durable puts and the PBKDF2 sample: what the charts
  /// and targets of `peers` were written for.
  var mergedPeers: PeersCommand.Report? {
    guard let first = peers.first?.figures ?? peersDurable?.figures else { return nil }
    var merged = first
    merged.sizes = peers.flatMap(\.figures.sizes)
    merged.durable = peersDurable?.figures.durable ?? []
    merged.seedSample = peersDurable?.figures.seedSample ?? []
    return merged
  }
}

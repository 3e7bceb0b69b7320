import Foundation

/// Every results file of a folder, decoded: what `cask-bench report` draws from. Files of an
/// older format version (`engine-format2-*`) and of the composite-index query run are read for
/// the list of sources only.
struct ResultsSet {
  /// A file's name and its header (everything but the figures).
  struct Source {
    let file: String
    let header: ResultsFile<Skipped>
  }

  /// Decodes any figures to nothing, for reading a file's header alone.
  struct Skipped: Decodable {
    init(from decoder: any Decoder) throws {}
  }

  var sources: [Source] = []
  /// By store size, smallest first.
  var peers: [ResultsFile<PeersCommand.Report>] = []
  var peersDurable: ResultsFile<PeersCommand.Report>?
  var engine: [ResultsFile<EngineFigures>] = []
  var engineDurable: ResultsFile<EngineFigures>?
  var codec: ResultsFile<CodecFigures>?
  var objects: [ResultsFile<ObjectsCommand.Report>] = []
  var queries: [ResultsFile<QueriesCommand.Results>] = []
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
    let decoder = JSONDecoder()
    for name in names {
      let data: Data
      do {
        data = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
      } catch {
        throw BenchError("cannot read '\(folder)/\(name)': \(error.localizedDescription)")
      }
      func decode<Figures: Decodable>(_ type: Figures.Type) throws -> ResultsFile<Figures> {
        do {
          return try decoder.decode(ResultsFile<Figures>.self, from: data)
        } catch {
          throw BenchError("'\(folder)/\(name)' is not a \(type) results file: \(error)")
        }
      }
      let header = try decode(Skipped.self)
      set.sources.append(Source(file: name, header: header))
      let stem = String(name.dropLast(".json".count))
      switch header.subcommand {
      case PeersCommand.name:
        let file = try decode(PeersCommand.Report.self)
        if stem.hasSuffix("-durable") { set.peersDurable = file } else { set.peers.append(file) }
      case EngineCommand.name where !stem.contains("-format"):
        let file = try decode(EngineFigures.self)
        if stem.hasSuffix("-durable") { set.engineDurable = file } else { set.engine.append(file) }
      case CodecCommand.name:
        set.codec = try decode(CodecFigures.self)
      case ObjectsCommand.name:
        set.objects.append(try decode(ObjectsCommand.Report.self))
      case QueriesCommand.name where !stem.contains("-composite"):
        set.queries.append(try decode(QueriesCommand.Results.self))
      case ImportCommand.name:
        set.imports.append(try decode([ImportCommand.Measured].self))
      case CodersCommand.name:
        set.coders = try decode(CodersCommand.Report.self)
      case OutboxCommand.name:
        set.outbox = try decode(OutboxCommand.Report.self)
      case IndexCommand.name:
        set.indexes.append(try decode(IndexCommand.Figures.self))
      case SyncCommand.name:
        set.syncs.append(try decode(SyncCommand.Report.self))
      case RecoveryCommand.name:
        set.recovery = try decode(RecoveryCommand.Figures.self)
      case BackupCommand.name:
        set.backups.append(try decode(BackupCommand.Figures.self))
      default:
        break
      }
    }
    set.peers.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    set.engine.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    set.objects.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    set.queries.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    set.imports.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    set.backups.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    set.syncs.sort { ($0.size ?? 0, $0.figures.backend) < ($1.size ?? 0, $1.figures.backend) }
    set.indexes.sort { ($0.size ?? 0) < ($1.size ?? 0) }
    return set
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

/// What the report reads of an `engine` results file (the file has more: every run's timings).
struct EngineFigures: Decodable {
  struct Operation: Decodable {
    let operation: String
    let writers: Int
    let opsPerSecond: Double
    let p50: Double
    let p99: Double
    let max: Double
  }

  struct Open: Decodable {
    let medianSeconds: Double
    let segments: Int
  }

  struct Memory: Decodable {
    let rssBytesPerKey: Double
    let rssTrimmedBytesPerKey: Double
    let heapBytesPerKey: Double
  }

  struct Size: Decodable {
    let keys: Int
    let runs: Int
    let operations: [Operation]
    let openWithHints: Open
    let openWithoutHints: Open
    let inlineKeyMemory: Memory

    func operation(_ name: String) -> Operation? {
      operations.first { $0.operation == name }
    }
  }

  struct Probe: Decodable {
    let opsPerSecond: Double
    let p50: Double
  }

  let sizes: [Size]
  let durable: [Operation]
  let syncProbe: Probe
}

/// What the report reads of the `codec` results file.
struct CodecFigures: Decodable {
  struct Throughput: Decodable {
    let message: String
    let format: String
    let operation: String
    let megabytesPerSecond: Double
    let boundMegabytesPerSecond: Double?
    let ratio: Double?
  }

  struct MessageRate: Decodable {
    let workload: String
    let messagesPerSecond: Double
  }

  let throughput: [Throughput]
  let messageRates: [MessageRate]
}

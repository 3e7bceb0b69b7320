import Foundation

/// Every results file of a folder: what `cask-bench report` draws from. Each file is decoded
/// when it is read, so that one the report cannot use fails the report, naming it; each
/// subcommand's files are decoded again, by type, where a table or chart asks for them.
struct ResultsSet {
  /// A file's name and its header (everything but the figures).
  struct Source {
    let file: String
    let header: ResultsFile<Skipped>
    /// The whole file, decoded again for its figures.
    let data: Data
  }

  /// Decodes any figures to nothing, for reading a file's header alone.
  struct Skipped: Decodable {
    init(from decoder: any Decoder) throws {}
  }

  /// Every file read, in name order.
  private(set) var sources: [Source] = []
  /// Whether the files of an older format version (`engine-format2-*`) and of the
  /// composite-index query run count beside the others: only for a run printing what it wrote.
  let everyKind: Bool

  init(everyKind: Bool = false) {
    self.everyKind = everyKind
  }

  /// Reads every `*.json` in `folder`, in name order.
  static func load(_ folder: String) throws -> ResultsSet {
    let names = try explained("cannot list the results folder '\(folder)'") {
      try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".json") }.sorted()
    }
    var set = ResultsSet()
    for name in names {
      let data = try explained("cannot read '\(folder)/\(name)'") {
        try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
      }
      try set.add(name, data: data, folder: folder)
    }
    return set
  }

  /// Adds one results file, `name` in `folder`, after checking that it decodes as its
  /// subcommand's figures.
  mutating func add(_ name: String, data: Data, folder: String) throws {
    func decode<Figures: Decodable>(_ type: Figures.Type) throws -> ResultsFile<Figures> {
      do {
        return try JSONDecoder().decode(ResultsFile<Figures>.self, from: data)
      } catch {
        throw BenchError("'\(folder)/\(name)' is not a \(type) results file: \(error)")
      }
    }
    func check<Figures: Decodable>(_ type: Figures.Type) throws { _ = try decode(type) }
    let header = try decode(Skipped.self)
    if let type = Self.figures[header.subcommand] { try check(type) }
    sources.append(Source(file: name, header: header, data: data))
    sources.sort { $0.file < $1.file }
  }

  /// What each subcommand's results files hold.
  static var figures: [String: any Decodable.Type] {
    [
      PeersCommand.name: PeersCommand.Report.self, EngineCommand.name: EngineCommand.Report.self,
      CodecCommand.name: CodecCommand.Report.self, ObjectsCommand.name: ObjectsCommand.Report.self,
      QueriesCommand.name: QueriesCommand.Results.self, ColdCommand.name: ColdCommand.Figures.self,
      ImportCommand.name: [ImportCommand.Measured].self, CodersCommand.name: CodersCommand.Report.self,
      OutboxCommand.name: OutboxCommand.Report.self, IndexCommand.name: IndexCommand.Figures.self,
      SyncCommand.name: SyncCommand.Report.self, RecoveryCommand.name: RecoveryCommand.Figures.self,
      BackupCommand.name: BackupCommand.Figures.self,
    ]
  }

  /// The files of `subcommand` whose name (without `.json`) passes `include`, decoded, by
  /// store size, smallest first, then by name.
  func files<Figures: Decodable>(_ subcommand: String, _ include: (String) -> Bool = { _ in true })
    -> [ResultsFile<Figures>]
  {
    sources.filter { source in
      let stem = String(source.file.dropLast(".json".count))
      let counts = everyKind || !(stem.contains("-format") || stem.contains("-composite"))
      return source.header.subcommand == subcommand && counts && include(stem)
    }
    .sorted { ($0.header.size ?? 0, $0.file) < ($1.header.size ?? 0, $1.file) }
    .compactMap { try? JSONDecoder().decode(ResultsFile<Figures>.self, from: $0.data) }
  }

  /// The last of `files(subcommand, include)`: the one file a subcommand keeps.
  func latest<Figures: Decodable>(_ subcommand: String, _ include: (String) -> Bool = { _ in true })
    -> ResultsFile<Figures>?
  {
    let all: [ResultsFile<Figures>] = files(subcommand, include)
    return all.last
  }

  var peers: [ResultsFile<PeersCommand.Report>] { files(PeersCommand.name) { !$0.hasSuffix("-durable") } }
  var peersDurable: ResultsFile<PeersCommand.Report>? { latest(PeersCommand.name) { $0.hasSuffix("-durable") } }
  var engine: [ResultsFile<EngineCommand.Report>] { files(EngineCommand.name) { !$0.hasSuffix("-durable") } }
  var engineDurable: ResultsFile<EngineCommand.Report>? {
    latest(EngineCommand.name) { $0.hasSuffix("-durable") }
  }
  var codec: ResultsFile<CodecCommand.Report>? { latest(CodecCommand.name) }
  var objects: [ResultsFile<ObjectsCommand.Report>] { files(ObjectsCommand.name) }
  var queries: [ResultsFile<QueriesCommand.Results>] { files(QueriesCommand.name) }
  var colds: [ResultsFile<ColdCommand.Figures>] { files(ColdCommand.name) }
  var imports: [ResultsFile<[ImportCommand.Measured]>] { files(ImportCommand.name) }
  var coders: ResultsFile<CodersCommand.Report>? { latest(CodersCommand.name) }
  var outbox: ResultsFile<OutboxCommand.Report>? { latest(OutboxCommand.name) }
  var indexes: [ResultsFile<IndexCommand.Figures>] { files(IndexCommand.name) }
  var recovery: ResultsFile<RecoveryCommand.Figures>? { latest(RecoveryCommand.name) }
  var backups: [ResultsFile<BackupCommand.Figures>] { files(BackupCommand.name) }
  /// By size, then the memory backend before PostgreSQL.
  var syncs: [ResultsFile<SyncCommand.Report>] {
    files(SyncCommand.name).sorted { ($0.size ?? 0, $0.figures.backend) < ($1.size ?? 0, $1.figures.backend) }
  }

  /// Every peers size in one report, with durable puts and the PBKDF2 sample: what the charts
  /// and targets of `peers` were written for.
  var mergedPeers: PeersCommand.Report? {
    let peers = peers
    let durable = peersDurable
    guard let first = peers.first?.figures ?? durable?.figures else { return nil }
    var merged = first
    merged.sizes = peers.flatMap(\.figures.sizes)
    merged.durable = durable?.figures.durable ?? []
    merged.seedSample = durable?.figures.seedSample ?? []
    return merged
  }
}

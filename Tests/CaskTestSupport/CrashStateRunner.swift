import CaskEngine
import Foundation

/// What the enumeration of one workload under one persistence model found.
public struct CrashStateReport: Sendable, CustomStringConvertible {
  public var workload: String
  public var model: CrashPersistenceModel
  /// Operations recorded (all kinds), and of them writes (mapped ones too) and syncs.
  public var operations: Int
  public var mappedWrites: Int
  public var syncs: Int
  /// Crash states enumerated, and the distinct directory images among them (each opened).
  public var states: Int
  public var distinctImages: Int
  /// States whose contents are the acknowledged state plus some of the unacknowledged steps
  /// after it, each whole, but not a prefix of them (a later step kept, an earlier one lost):
  /// allowed (nothing unacknowledged is promised, in any order), checked like every other
  /// state, and counted because Docs/RELIABILITY.md gives their number.
  public var outOfOrder: Int = 0
  public var outOfOrderExamples: [String] = []
  /// Distinct images `scripts/read-store.py` read, and of them those it refused where the
  /// engine reported damage too, at open or in `verify()` (the reader stops at damage the
  /// scan passes over).
  public var readerRuns: Int = 0
  public var readerRefusedDamaged: Int = 0
  /// How many states broke an invariant, and the first few of them, described.
  public var violationCount: Int
  public var violations: [String]

  public var description: String {
    "[crash-states] \(workload) / \(model): \(operations) operations (\(mappedWrites) mapped writes, \(syncs) syncs), "
      + "\(states) crash states, \(distinctImages) distinct images opened, \(violationCount) violations, "
      + "\(outOfOrder) with unacknowledged steps kept out of order, "
      + "\(readerRuns) read by scripts/read-store.py (\(readerRefusedDamaged) refused where the engine found damage)"
  }
}

/// Runs a workload on a `RecordingFileSystem`, enumerates the crash states of what it
/// recorded under each persistence model, writes each distinct one into a real directory,
/// opens the store there with the real file system and checks the invariants:
///
/// - the store opens without help, with one of the workload's passwords;
/// - its contents are the model after the last step promised durable, or after one of the
///   steps begun since, in order (nothing acknowledged lost, no value never written, no
///   acknowledged delete undone, a batch whole or absent);
/// - `verify()` reports no damage, unless the state tore a write;
/// - the store is not older than the integrity token taken after the last durable step;
/// - the workload's own checks (indexes against objects, a backup) pass;
/// - `scripts/read-store.py` (on the images `readerSample` picks) reads the same keys and
///   values as the engine, and refuses a state only where `verify()` reports damage.
public struct CrashStateRunner: Sendable {
  public var bounds: CrashStateBounds
  /// Describes at most this many violations per report (all are counted).
  public var describedViolations = 5
  /// Runs `scripts/read-store.py` on the distinct images `readerSample` picks, before the
  /// store opens them.
  public var independentReader: StoreReaderScript?
  /// Which images the reader reads: every one, or a seeded share of them.
  public var readerSample: ReaderSample

  public init(
    bounds: CrashStateBounds = .fromEnvironment, independentReader: StoreReaderScript? = nil,
    readerSample: ReaderSample = .every
  ) {
    self.bounds = bounds
    self.independentReader = independentReader
    self.readerSample = readerSample
  }

  /// The runner `swift test` and `scripts/soak.sh` use: bounds from the environment, and the
  /// independent reader (when python3 with `cryptography` is there) on every image in the long
  /// mode, on a seeded sample otherwise (`ReaderSample.fromEnvironment`).
  public static var standard: CrashStateRunner {
    CrashStateRunner(
      bounds: .fromEnvironment, independentReader: StoreReaderScript.available, readerSample: .fromEnvironment)
  }

  /// What the workload's run recorded, with the model after each step and the tokens taken.
  public struct Run {
    public var recording: CrashRecording
    public var models: [[String: Data]]
    /// The integrity token taken after each durable step that left the store open.
    public var tokens: [Int: String]
    /// The steps promised durable once they returned.
    public var durable: Set<Int>
    public var anomalies: [String]
    /// What each step does to the model.
    public var effects: [(inout [String: Data]) -> Void]
    /// For each step, the states it noted on its way (`noteIntermediateState`).
    public var intermediates: [[(at: Int, model: [String: Data])]] = []
  }

  /// Runs the workload once, recording it; `wrap` may put a faulty file system between the
  /// store and the recorder (a planted bug).
  public func record(
    _ workload: CrashStateWorkload, wrap: (RecordingFileSystem) -> any FileSystem = { $0 }
  ) throws -> Run {
    let directory = try TemporaryDirectory("crash-record")
    defer { directory.remove() }
    var prepareOptions = workload.options
    prepareOptions.fileSystem = PosixFileSystem()
    try workload.prepare(directory.path, prepareOptions)
    // Read before the recorder takes the directory as its start: opening may write.
    let initialModel =
      try workload.initialModelFromStore
      ? Self.contents(of: workload, at: directory.path, prepareOptions) : workload.initialModel
    let recorder = try RecordingFileSystem(root: directory.path)
    var options = workload.options
    options.fileSystem = wrap(recorder)
    let session = CrashStateSession(
      fileSystem: recorder, root: directory.path, storeName: workload.storeName, options: options,
      password: workload.passwords.last ?? testPassword)
    var models = [initialModel]
    var intermediates: [[(at: Int, model: [String: Data])]] = []
    var tokens: [Int: String] = [:]
    var durable: Set<Int> = []
    var steps = workload.steps
    steps.append(.close)
    for (index, step) in steps.enumerated() {
      let number = recorder.beginStep(step.label)
      session.intermediates = []
      try step.run(session)
      recorder.endStep(number)
      intermediates.append(session.intermediates)
      var model = models[index]
      step.effect(&model)
      models.append(model)
      if step.durable { durable.insert(index) }
      if step.durable, let store = session.openStore, let token = try? store.integrityToken() {
        tokens[index] = token
      }
    }
    return Run(
      recording: recorder.recording, models: models, tokens: tokens, durable: durable, anomalies: recorder.anomalies,
      effects: steps.map(\.effect), intermediates: intermediates)
  }

  /// What `workload.contents` reads from the store prepared under `root`.
  static func contents(of workload: CrashStateWorkload, at root: String, _ options: CaskStore.Options) throws
    -> [String: Data]
  {
    let store = try CaskStore(
      path: "\(root)/\(workload.storeName)", password: workload.passwords.last ?? testPassword, options: options)
    defer { try? store.close() }
    return try workload.contents(store)
  }

  /// Records the workload and checks every crash state under each model.
  public func run(
    _ workload: CrashStateWorkload, models: [CrashPersistenceModel] = CrashPersistenceModel.allCases,
    wrap: (RecordingFileSystem) -> any FileSystem = { $0 }
  ) throws -> [CrashStateReport] {
    let run = try record(workload, wrap: wrap)
    return try models.map { try check(run, of: workload, under: $0) }
  }

  /// The outcome of opening one image.
  struct Outcome {
    var contents: [String: Data]?
    var failure: String?
    var damage: [String] = []
    var problems: [String] = []
    /// For each token (by step), whether the store is at least as new.
    var fresh: [Int: Bool] = [:]
    /// Whether `scripts/read-store.py` read the image, and what it disagreed with.
    var readerRan = false
    var readerProblem: String?
    var readerRefusedDamage = false
  }

  /// Checks every crash state of `run` under `model`.
  public func check(_ run: Run, of workload: CrashStateWorkload, under model: CrashPersistenceModel) throws
    -> CrashStateReport
  {
    let enumerator = CrashStateEnumerator(recording: run.recording, model: model, bounds: bounds)
    let counts = run.recording.counts
    var report = CrashStateReport(
      workload: workload.name, model: model, operations: run.recording.operations.count,
      mappedWrites: counts.mappedWrites, syncs: counts.fileSyncs + counts.directorySyncs, states: 0,
      distinctImages: 0, violationCount: 0, violations: [])
    for anomaly in run.anomalies { note("the recorder could not place a call: \(anomaly)", in: &report) }
    var outcomes: [CrashImage: Outcome] = [:]
    let scratch = try TemporaryDirectory("crash-state")
    defer { scratch.remove() }
    for crashPoint in enumerator.crashPoints {
      let (low, high, token) = window(run, crashPoint)
      // The states of the steps since the last durable one, each whole, in order; and those
      // the steps under way reached on their way.
      var candidates = Array(run.models[low...high])
      for step in low..<min(high, run.intermediates.count) {
        candidates += run.intermediates[step].filter { $0.at <= crashPoint }.map(\.model)
      }
      // Nothing unacknowledged is promised, in any order: some of those steps kept, some lost.
      let unordered = Self.subsetModels(run, low, high)
      for state in enumerator.states(at: crashPoint) {
        report.states += 1
        let image = CrashImage(run.recording, state)
        let outcome: Outcome
        if let known = outcomes[image] {
          outcome = known
        } else {
          outcome = try open(image, of: workload, tokens: run.tokens, in: scratch)
          outcomes[image] = outcome
          report.distinctImages += 1
          if outcome.readerRan { report.readerRuns += 1 }
          if outcome.readerRefusedDamage { report.readerRefusedDamaged += 1 }
        }
        var allowed = candidates
        if let contents = outcome.contents, !candidates.contains(contents), unordered.contains(contents) {
          report.outOfOrder += 1
          if report.outOfOrderExamples.count < describedViolations {
            report.outOfOrderExamples.append("\(state) [\(describe(run.recording, crashPoint))]")
          }
          allowed.append(contents)
        }
        let hole = Self.hasHole(run.recording, state)
        var found = problems(outcome, state: state, hole: hole, candidates: allowed, token: token)
        if let contents = outcome.contents, !allowed.contains(contents), !run.models[0...high].contains(contents),
          Self.subsetModels(run, 0, high).contains(contents)
        {
          found.append("a step acknowledged as durable is lost while a later one is kept (out of order past a sync)")
        }
        for problem in found {
          note("\(state) [\(describe(run.recording, crashPoint))]: \(problem)", in: &report)
        }
      }
    }
    return report
  }

  private func note(_ violation: String, in report: inout CrashStateReport) {
    report.violationCount += 1
    if report.violations.count < describedViolations { report.violations.append(violation) }
  }

  /// The models a crash after `crashPoint` operations may leave (from the last durable
  /// step's to the last begun step's), and the token of the last durable step.
  func window(_ run: Run, _ crashPoint: Int) -> (Int, Int, Int?) {
    var low = 0
    var high = 0
    var token: Int?
    for (index, step) in run.recording.steps.enumerated() {
      if let end = step.end, end <= crashPoint {
        high = index + 1
        if run.durable.contains(index) {
          low = index + 1
          if run.tokens[index] != nil { token = index }
        }
      } else if step.begin < crashPoint {
        high = index + 1
      }
    }
    return (low, max(low, high), token)
  }

  private func describe(_ recording: CrashRecording, _ crashPoint: Int) -> String {
    let running = recording.steps.last { $0.begin < crashPoint }
    return running.map { "during or after \($0.label)" } ?? "before the first step"
  }

  /// The models of every subset of the steps between the durable floor `low` and `high`,
  /// each step whole, applied in order.
  static func subsetModels(_ run: Run, _ low: Int, _ high: Int) -> [[String: Data]] {
    let free = high - low
    guard free > 0, free <= 12 else { return [] }
    return (0..<(1 << free)).map { mask in
      var model = run.models[low]
      for step in 0..<free where mask & (1 << step) != 0 { run.effects[low + step](&model) }
      return model
    }
  }

  /// Whether the state lost a write of a file and kept a later one of the same file: a hole,
  /// which `verify()` rightly reports as damage.
  static func hasHole(_ recording: CrashRecording, _ state: CrashState) -> Bool {
    var lostNodes: Set<Int> = []
    for index in 0..<state.crashPoint {
      guard case .write(let node, _, _, _) = recording.operations[index] else { continue }
      if state.lost.contains(index) { lostNodes.insert(node) } else if lostNodes.contains(node) { return true }
    }
    return false
  }

  private func problems(_ outcome: Outcome, state: CrashState, hole: Bool, candidates: [[String: Data]], token: Int?)
    -> [String]
  {
    var found: [String] = []
    guard let contents = outcome.contents else {
      return ["the store does not open: \(outcome.failure ?? "unknown error")"]
    }
    if !candidates.contains(contents) {
      found.append("contents match no acknowledged state: \(Self.difference(contents, candidates))")
    }
    if !outcome.damage.isEmpty, state.torn == nil, !hole {
      found.append("verify() reports damage without a torn or lost write: \(outcome.damage.prefix(3))")
    }
    if let token, outcome.fresh[token] == false {
      found.append("the store is older than the integrity token taken after the last durable step")
    }
    if let reader = outcome.readerProblem { found.append(reader) }
    return found + outcome.problems
  }

  /// How `contents` differs from the nearest candidate, by key names only.
  static func difference(_ contents: [String: Data], _ candidates: [[String: Data]]) -> String {
    let nearest = candidates.min { a, b in distance(contents, a) < distance(contents, b) } ?? [:]
    let missing = nearest.keys.filter { contents[$0] == nil }.sorted()
    let extra = contents.keys.filter { nearest[$0] == nil }.sorted()
    let changed = contents.keys.filter { nearest[$0] != nil && nearest[$0] != contents[$0] }.sorted()
    return "missing \(missing), unexpected \(extra), other values \(changed) (of \(candidates.count) candidates)"
  }

  static func distance(_ a: [String: Data], _ b: [String: Data]) -> Int {
    Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.count
  }
}

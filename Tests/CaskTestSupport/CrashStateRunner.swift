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
  /// allowed by every invariant, counted because Docs/RELIABILITY.md states the order.
  public var outOfOrder: Int = 0
  public var outOfOrderExamples: [String] = []
  /// How many states broke an invariant, and the first few of them, described.
  public var violationCount: Int
  public var violations: [String]

  public var description: String {
    "[crash-states] \(workload) / \(model): \(operations) operations (\(mappedWrites) mapped writes, \(syncs) syncs), "
      + "\(states) crash states, \(distinctImages) distinct images opened, \(violationCount) violations, "
      + "\(outOfOrder) with unacknowledged steps kept out of order"
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
/// - the workload's own checks (indexes against objects, a backup) pass.
public struct CrashStateRunner: Sendable {
  public var bounds: CrashStateBounds
  /// Describes at most this many violations per report (all are counted).
  public var describedViolations = 5
  /// Runs `scripts/read-store.py` on every distinct image whose store opened (the long mode).
  public var independentReader: StoreReaderScript?

  public init(bounds: CrashStateBounds = .fromEnvironment, independentReader: StoreReaderScript? = nil) {
    self.bounds = bounds
    self.independentReader = independentReader
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
    let recorder = try RecordingFileSystem(root: directory.path)
    var options = workload.options
    options.fileSystem = wrap(recorder)
    let session = CrashStateSession(
      fileSystem: recorder, root: directory.path, storeName: workload.storeName, options: options,
      password: workload.passwords.last ?? testPassword)
    var models = [workload.initialModel]
    var tokens: [Int: String] = [:]
    var durable: Set<Int> = []
    var steps = workload.steps
    steps.append(.close)
    for (index, step) in steps.enumerated() {
      let number = recorder.beginStep(step.label)
      try step.run(session)
      recorder.endStep(number)
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
      effects: steps.map(\.effect))
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
    /// What `scripts/read-store.py` disagreed with, if it ran.
    var readerProblem: String?
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
      let candidates = Array(run.models[low...high])
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
        }
        if let contents = outcome.contents, !candidates.contains(contents),
          Self.subsetModels(run, low, high).contains(contents)
        {
          report.outOfOrder += 1
          if report.outOfOrderExamples.count < describedViolations {
            report.outOfOrderExamples.append("\(state) [\(describe(run.recording, crashPoint))]")
          }
          continue
        }
        let hole = Self.hasHole(run.recording, state)
        for problem in problems(outcome, state: state, hole: hole, candidates: candidates, token: token) {
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
    // A state that tore or lost a write in the middle of a file is left to the engine: the
    // reader stops at damage the engine's scan passes over.
    if let reader = outcome.readerProblem, state.torn == nil, !hole { found.append(reader) }
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

  private func open(
    _ image: CrashImage, of workload: CrashStateWorkload, tokens: [Int: String], in scratch: TemporaryDirectory
  )
    throws -> Outcome
  {
    let root = scratch.file("image-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    try image.write(to: root)
    var outcome = Outcome()
    let path = "\(root)/\(workload.storeName)"
    var readerEntries: Result<[Data: Data], StoreReaderScript.ReaderFailure>?
    if let reader = independentReader, FileManager.default.fileExists(atPath: "\(path)/CASK") {
      readerEntries = reader.read(path, passwords: workload.passwords)
    }
    var options = workload.options
    options.fileSystem = PosixFileSystem()
    var store: CaskStore?
    var lastError: (any Error)?
    for password in workload.passwords {
      do {
        store = try CaskStore(path: path, password: password, options: options)
        break
      } catch CaskError.wrongPassword {
        lastError = CaskError.wrongPassword
      } catch {
        lastError = error
        break
      }
    }
    guard let store else {
      outcome.failure = lastError.map { "\($0)" }
      return outcome
    }
    defer { try? store.close() }
    do {
      outcome.contents = try workload.contents(store)
      outcome.damage = try store.verify().damage.map { "\($0)" }
      for (step, token) in tokens {
        outcome.fresh[step] = (try? store.checkFreshness(against: token)) != nil
      }
      outcome.problems += try workload.check(store, root)
      // The reader refuses a segment with damage inside it (only a torn tail and reserved
      // zeros are normal after a crash, Docs/FORMAT.md section 9), so it is held to the
      // engine only where `verify()` found none. It lists the collection layer's own keys
      // too, which `keys()` leaves out: every key the engine serves must be in its output
      // with the same value.
      if outcome.damage.isEmpty, workload.independentlyReadable, let readerEntries {
        switch readerEntries {
        case .failure(let failure):
          outcome.readerProblem = "scripts/read-store.py does not read the state: \(failure.message)"
        case .success(let entries):
          let engine = try CrashStateWorkload.keyValues(store)
          if engine.contains(where: { entries[Data($0.key.utf8)] != $0.value }) {
            outcome.readerProblem = "scripts/read-store.py reads other contents than the engine"
          }
        }
      }
    } catch {
      outcome.contents = nil
      outcome.failure = "opened, then failed: \(error)"
    }
    return outcome
  }
}

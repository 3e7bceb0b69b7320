import CaskEngine
import Foundation

/// A small workload for the crash-state enumerator: a start laid out without recording, then
/// steps run on a `RecordingFileSystem`, each with what it does to the model of the store's
/// contents and whether, once it returns, everything so far is promised durable.
///
/// A new workload is a few lines: a `prepare` that makes the store it starts from, and steps.
public struct CrashStateWorkload {
  /// One step: `run` acts through the session; `effect` is what it does to the model.
  public struct Step {
    public var label: String
    /// Whether everything up to the end of this step is promised to survive a crash once it
    /// returns (a write under `.always`, a `sync()`, a `close()`, a maintenance call).
    public var durable: Bool
    public var effect: (inout [String: Data]) -> Void
    public var run: (CrashStateSession) throws -> Void

    public init(
      _ label: String, durable: Bool, effect: @escaping (inout [String: Data]) -> Void = { _ in },
      run: @escaping (CrashStateSession) throws -> Void
    ) {
      self.label = label
      self.durable = durable
      self.effect = effect
      self.run = run
    }
  }

  public var name: String
  /// The store's directory, relative to the recorded root.
  public var storeName = "store"
  /// The store's passwords, newest first: a crash state is opened with the first that works.
  public var passwords = [testPassword]
  /// The options of every open (the file system is set by the enumerator).
  public var options: CaskStore.Options
  /// What the store holds before the first step.
  public var initialModel: [String: Data] = [:]
  /// Whether the model before the first step is what `contents` reads from the store
  /// `prepare` made (for a start whose exact contents only the run knows, such as a synced
  /// collection's ledger), instead of `initialModel`.
  public var initialModelFromStore = false
  /// Lays out the start under the root with the real file system; nothing it does is
  /// recorded, and all of it counts as durable.
  public var prepare: (_ root: String, _ options: CaskStore.Options) throws -> Void = { _, _ in }
  public var steps: [Step]
  /// What a recovered store holds, to compare with the model. Reads every key by default.
  public var contents: (CaskStore) throws -> [String: Data] = CrashStateWorkload.keyValues
  /// Further checks of a recovered store (indexes against objects, a backup's copy); each
  /// returned text is a violation.
  public var check: (_ store: CaskStore, _ root: String) throws -> [String] = { _, _ in [] }

  /// Whether `scripts/read-store.py` is held to the engine in the states it reads (every
  /// workload of a format the reader knows; a workload of a format it does not read yet sets
  /// this to `false`, and Docs/RELIABILITY.md says so).
  public var independentlyReadable = true

  public init(_ name: String, options: CaskStore.Options = CrashStateWorkload.defaultOptions, steps: [Step]) {
    self.name = name
    self.options = options
    self.steps = steps
  }

  /// `.always`, no automatic compaction, small segments, `testKeyDerivation`.
  public static var defaultOptions: CaskStore.Options {
    var options = CaskStore.Options(durability: .always, segmentSizeLimit: 4096, autoCompaction: nil)
    options.keyDerivation = testKeyDerivation
    return options
  }

  /// Every key and its value.
  public static func keyValues(_ store: CaskStore) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    for key in try store.keys() { contents[key] = try store.get(key) }
    return contents
  }

  /// Makes the store at `root/storeName` with `options` and runs `body` on it, then closes it.
  public static func makeStore(
    _ root: String, _ options: CaskStore.Options, name: String = "store", _ body: (CaskStore) throws -> Void = { _ in }
  ) throws {
    let store = try CaskStore(path: "\(root)/\(name)", password: testPassword, options: options)
    try body(store)
    try store.close()
  }
}

/// What a running workload's steps act on: the recording file system and the store it opened.
public final class CrashStateSession {
  public let fileSystem: RecordingFileSystem
  public let root: String
  public let storePath: String
  public let options: CaskStore.Options
  public let password: String
  /// The open store, if any; `store()` opens it.
  public var openStore: CaskStore?
  /// The states a running step passed through, each with the number of operations recorded
  /// when it was reached (see `noteIntermediateState(_:)`).
  var intermediates: [(at: Int, model: [String: Data])] = []

  init(fileSystem: RecordingFileSystem, root: String, storeName: String, options: CaskStore.Options, password: String) {
    self.fileSystem = fileSystem
    self.root = root
    self.storePath = "\(root)/\(storeName)"
    // The options' file system is the recorder, or a planted bug in front of it.
    self.options = options
    self.password = password
  }

  /// The open store, opened now (with `password`) if it is not.
  public func store(password: String? = nil) throws -> CaskStore {
    if let openStore { return openStore }
    let store = try CaskStore(path: storePath, password: password ?? self.password, options: options)
    openStore = store
    return store
  }

  /// Notes that the running step reached `contents` when `operations` operations were
  /// recorded (`fileSystem.operationCount` then): a commit inside a step that makes several,
  /// such as a sync's page by page. A crash from there on may leave it, besides the states
  /// before and after the step.
  public func noteIntermediateState(_ contents: [String: Data], reachedAt operations: Int) {
    intermediates.append((operations, contents))
  }

  /// Closes the store if it is open.
  public func close() throws {
    try openStore?.close()
    openStore = nil
  }
}

extension CrashStateWorkload.Step {
  /// `put(value, forKey:)`, durable when the options say `.always`.
  public static func put(_ key: String, _ value: String, durable: Bool = true) -> Self {
    Self(
      "put \(key)", durable: durable, effect: { $0[key] = Data(value.utf8) },
      run: { try $0.store().put(Data(value.utf8), forKey: key) })
  }

  /// `delete(key)`.
  public static func delete(_ key: String, durable: Bool = true) -> Self {
    Self("delete \(key)", durable: durable, effect: { $0[key] = nil }, run: { _ = try $0.store().delete(key) })
  }

  /// A batch of puts (a `nil` value deletes).
  public static func batch(_ changes: [(String, String?)], durable: Bool = true) -> Self {
    Self(
      "batch of \(changes.count)", durable: durable,
      effect: { model in for (key, value) in changes { model[key] = value.map { Data($0.utf8) } } },
      run: { session in
        try session.store().batch { batch in
          for (key, value) in changes {
            if let value { try batch.put(Data(value.utf8), forKey: key) } else { try batch.delete(key) }
          }
        }
      })
  }

  /// `sync()`: everything before it is durable.
  public static var sync: Self { Self("sync", durable: true) { try $0.store().sync() } }

  /// `close()`.
  public static var close: Self { Self("close", durable: true) { try $0.close() } }

  /// Opens the store (creating it if it is missing).
  public static var open: Self { Self("open", durable: true) { _ = try $0.store() } }

  /// `compact()`.
  public static var compact: Self { Self("compact", durable: true) { _ = try $0.store().compact() } }
}

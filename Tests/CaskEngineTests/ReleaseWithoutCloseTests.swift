import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A store whose last reference goes while one of its background jobs runs (the hint of a full
/// segment, the periodic sync, an automatic compaction) closes: the release returns, the job's
/// thread is not left waiting for itself, the lock is released and the store reopens with
/// every acknowledged write. Each job is held at one exact point by a gate in the file system,
/// so the release lands inside the job every time, not by luck of scheduling.
@Suite("A store released without close() while a background job runs")
struct ReleaseWithoutCloseTests {
  /// How long any wait in these tests lasts at most. A close that waits for itself never ends,
  /// so reaching the limit means the release deadlocked.
  static let limit = 30.0

  @Test("released while the hint of a full segment is being written")
  func releasedDuringHintJob() throws {
    var options = testStoreOptions
    options.segmentSizeLimit = 64 << 10
    let gate = JobGate { operation, path in operation == "create" && path.contains(".hint") }
    try check(options: options, gate: gate) { store in
      // About 1.1 KB a record: 200 records fill three 64 KiB segments.
      var written: [String: Data] = [:]
      for index in 0..<200 {
        let value = Data("hint-\(index)-".utf8) + Data(repeating: UInt8(index % 251), count: 1000)
        try store.put(value, forKey: "key-\(index)")
        written["key-\(index)"] = value
      }
      return written
    }
  }

  @Test("released while the periodic syncer syncs")
  func releasedDuringPeriodicSync() throws {
    var options = testStoreOptions
    options.durability = .periodic(seconds: 0.005)
    let gate = JobGate { operation, _ in
      operation == "sync" && onBackgroundThread
    }
    try check(options: options, gate: gate) { store in
      var written: [String: Data] = [:]
      for index in 0..<50 {
        let value = Data("periodic-\(index)".utf8)
        try store.put(value, forKey: "key-\(index)")
        written["key-\(index)"] = value
      }
      return written
    }
  }

  @Test("released while an automatic compaction runs")
  func releasedDuringAutomaticCompaction() throws {
    var options = testStoreOptions
    options.segmentSizeLimit = 16 << 10
    options.autoCompaction = CaskStore.AutoCompaction(deadRatio: 0.1, minimumDeadBytes: 1)
    let gate = JobGate { operation, _ in
      operation == "create" && onBackgroundThread
    }
    try check(options: options, gate: gate) { store in
      // Every key overwritten many times: most bytes are dead, and a compaction is started
      // after 256 writes.
      var written: [String: Data] = [:]
      for round in 0..<40 {
        for index in 0..<20 {
          let value = Data("round-\(round)-key-\(index)".utf8) + Data(repeating: 0x61, count: 200)
          try store.put(value, forKey: "key-\(index)")
          written["key-\(index)"] = value
        }
      }
      return written
    }
  }

  /// Opens a store through `gate`, runs `workload` (which returns what it wrote), waits until
  /// the gate holds a job, drops the last reference to the store on another thread, opens the
  /// gate, and checks that the release returns and the store reopens with every write.
  private func check(
    options: CaskStore.Options, gate: JobGate, workload: (CaskStore) throws -> [String: Data]
  ) throws {
    try withTemporaryDirectory("release-without-close") { directory in
      let path = directory.file("store.cask")
      var gated = options
      gated.fileSystem = gate
      let (holder, written) = try Self.openAndWrite(path: path, options: gated, workload: workload)
      #expect(waitUntil(timeout: Self.limit) { gate.held > 0 }, "no background job reached the gate")

      let released = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        holder.drop()
        released.signal()
      }
      // Whichever thread ends up running the store's deinit, the job it waits for can finish.
      gate.open()
      #expect(released.wait(timeout: .now() + Self.limit) == .success, "dropping the store never returned")

      // The lock goes last in close(): a close that never ends leaves the store open forever.
      var reopened: CaskStore?
      _ = waitUntil(timeout: Self.limit, interval: 0.01) {
        reopened = try? CaskStore(path: path, password: testPassword, options: testStoreOptions)
        return reopened != nil
      }
      let store = try #require(reopened, "the released store never closed: its lock is still held")
      defer { try? store.close() }
      #expect(store.count == written.count)
      for (key, value) in written { #expect(try store.get(key) == value, "\(key)") }
    }
  }

  /// Opens the store and runs the workload in a frame of its own, so that no local of the
  /// test keeps the store alive: the holder's reference (and the background job's) are all.
  private static func openAndWrite(
    path: String, options: CaskStore.Options, workload: (CaskStore) throws -> [String: Data]
  ) throws -> (StoreHolder, [String: Data]) {
    let store = try CaskStore(path: path, password: testPassword, options: options)
    let written = try workload(store)
    return (StoreHolder(store), written)
  }
}

/// Whether the calling thread is one of a store's background threads (the periodic syncer or
/// an automatic compaction), which `BackgroundWork` marks in their thread dictionaries.
private var onBackgroundThread: Bool {
  Thread.current.threadDictionary["CipherCask.background"] != nil
}

/// The only reference a test keeps to a store, dropped on demand.
private final class StoreHolder: @unchecked Sendable {
  private let lock = NSLock()
  private var store: CaskStore?

  init(_ store: CaskStore) { self.store = store }

  func drop() {
    let last = lock.withLock { () -> CaskStore? in
      defer { store = nil }
      return store
    }
    _ = consume last
  }
}

/// The real file system, where every operation that `holds` picks waits until `open()` (at
/// most `ReleaseWithoutCloseTests.limit` seconds); `held` counts them.
private final class JobGate: ForwardingFileSystem, @unchecked Sendable {
  private let holds: @Sendable (_ operation: String, _ path: String) -> Bool
  private let state = Locked<(held: Int, open: Bool)>((0, false))
  private let opened = DispatchSemaphore(value: 0)

  init(holds: @escaping @Sendable (_ operation: String, _ path: String) -> Bool) {
    self.holds = holds
    super.init()
  }

  var held: Int { state.withLock { $0.held } }

  func open() {
    state.withLock { $0.open = true }
    for _ in 0..<64 { opened.signal() }
  }

  func pass(_ operation: String, _ path: String) {
    guard holds(operation, path) else { return }
    let wait = state.withLock { state -> Bool in
      state.held += 1
      return !state.open
    }
    if wait { _ = opened.wait(timeout: .now() + ReleaseWithoutCloseTests.limit) }
  }

  override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    if mode == .createNew { pass("create", path) }
    return GatedFile(try super.open(path, mode: mode), gate: self)
  }
}

private final class GatedFile: ForwardingStorageFile, @unchecked Sendable {
  let gate: JobGate

  init(_ base: any StorageFile, gate: JobGate) {
    self.gate = gate
    super.init(base)
  }

  override func sync() throws {
    gate.pass("sync", path)
    try base.sync()
  }
}

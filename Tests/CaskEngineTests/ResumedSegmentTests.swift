import CaskTestSupport
import Foundation
import RNCryptorCodec
import Synchronization
import Testing

@testable import CaskEngine

/// A writable open of a cleanly closed store resumes its last segment without writing: the
/// hint and the manifest a clean close left still describe it, the manifest listing the
/// segment as active. The first write appends and leaves the hint, stale from then on, to be
/// replaced by the segment's next one: a hint that does not state the segment's length is
/// never trusted (Docs/FORMAT.md, "Opening a store", step 9).
@Suite("A reopened store writes nothing before its first write")
struct ResumedSegmentTests {
  static let options = CaskStore.Options(durability: .never, autoCompaction: nil)

  static func makeStore(_ path: String, keys: RNCryptor.Keys) throws {
    let store = try CaskStore(path: path, keys: keys, options: options)
    try store.put(Data("1".utf8), forKey: "a")
    try store.put(Data("2".utf8), forKey: "b")
    try store.delete("a")
    try store.close()
  }

  /// Runs `body` on a store `makeStore` filled and closed cleanly, in a temporary directory.
  static func withClosedStore(
    _ name: String, _ body: (TemporaryDirectory, String, RNCryptor.Keys) throws -> Void
  ) throws {
    try withTemporaryDirectory(name) { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      try makeStore(path, keys: keys)
      try body(directory, path, keys)
    }
  }

  /// What a SIGKILL now would leave (the page cache holds every write), opened: it must open
  /// without an integrity violation.
  static func openCrashImage(of path: String, in directory: TemporaryDirectory, keys: RNCryptor.Keys) throws
    -> CaskStore
  {
    let image = directory.file("image.cask")
    try HookedFileSystem.copyStore(path, to: image)
    let reopened = try CaskStore(path: image, keys: keys, options: options)
    #expect(reopened.stats().recovery.integrityViolations.isEmpty)
    return reopened
  }

  @Test("opening, reading and closing a cleanly closed store leaves every file as it was")
  func readOnlyUseWritesNothing() throws {
    try Self.withClosedStore("resume-untouched") { directory, path, keys in
      let before = try FileDamage.files(ofStore: path)
      #expect(before[Segment.hintName(id: 1)] != nil)

      let store = try CaskStore(path: path, keys: keys, options: Self.options)
      let token = try store.integrityToken()
      #expect(try store.get("b") == Data("2".utf8))
      #expect(try store.verify().isClean)
      #expect(try FileDamage.files(ofStore: path) == before)
      try store.close()
      #expect(try FileDamage.files(ofStore: path) == before)

      let again = try CaskStore(path: path, keys: keys, options: Self.options)
      defer { try? again.close() }
      try again.checkFreshness(against: token)
      #expect(again.stats().recovery.segmentsFromHints == 1)
    }
  }

  @Test("a store whose last segment is a compaction output opens and closes without writing")
  func compactedStoreWritesNothing() throws {
    try Self.withClosedStore("resume-compacted") { directory, path, keys in
      var store = try CaskStore(path: path, keys: keys, options: Self.options)
      try store.put(Data("3".utf8), forKey: "b")
      _ = try store.compact()
      try store.close()
      let before = try FileDamage.files(ofStore: path)
      store = try CaskStore(path: path, keys: keys, options: Self.options)
      #expect(try store.get("b") == Data("3".utf8))
      try store.close()
      #expect(try FileDamage.files(ofStore: path) == before)
      // The first write after such an open starts a segment the manifest allows.
      store = try CaskStore(path: path, keys: keys, options: Self.options)
      try store.put(Data("4".utf8), forKey: "d")
      let reopened = try Self.openCrashImage(of: path, in: directory, keys: keys)
      defer { try? reopened.close() }
      try store.close()
      #expect(try reopened.get("d") == Data("4".utf8))
      #expect(try reopened.get("b") == Data("3".utf8))
    }
  }

  @Test("a segment cut short after an open and close without writes is still refused")
  func truncationAfterUntouchedReopen() throws {
    try Self.withClosedStore("resume-truncate") { directory, path, keys in
      try CaskStore(path: path, keys: keys, options: Self.options).close()
      let segment = "\(path)/\(Segment.fileName(id: 1))"
      try FileDamage.truncate(segment, to: try FileDamage.size(of: segment) - 60)
      #expect {
        try CaskStore(path: path, keys: keys, options: Self.options).close()
      } throws: { error in
        guard case CaskError.integrityViolation = error else { return false }
        return true
      }
    }
  }

  /// The kinds of write that can be the first one after an open.
  enum FirstWrite: CaseIterable, Sendable {
    case put, streamedBatch

    func run(on store: CaskStore) throws {
      switch self {
      case .put: try store.put(Data("3".utf8), forKey: "c")
      case .streamedBatch: try store.streamedBatch { batch in _ = try batch.put(Data("3".utf8), forKey: "c") }
      }
    }
  }

  @Test("a clean close lists the last segment as active at its length, beside a hint of that length")
  func cleanCloseListsLastSegmentActive() throws {
    try Self.withClosedStore("resume-close-active") { _, path, keys in
      let manifest = try Self.manifest(of: path, keys: keys)
      let segment = "\(path)/\(Segment.fileName(id: 1))"
      #expect(manifest.segments.map(\.isActive) == [true])
      #expect(manifest.segments.first?.length == UInt64(try FileDamage.size(of: segment)))
      #expect(FileManager.default.fileExists(atPath: "\(path)/\(Segment.hintName(id: 1))"))
    }
  }

  @Test(
    "the first write after a clean open writes no manifest, syncs no directory and removes nothing itself",
    arguments: FirstWrite.allCases)
  func firstWriteWritesOnlyTheRecord(_ write: FirstWrite) throws {
    try Self.withClosedStore("resume-first-write-calls") { _, path, keys in
      let files = FileCallRecorder()
      var options = Self.options
      options.fileSystem = files
      let store = try CaskStore(path: path, keys: keys, options: options)
      defer { try? store.close() }
      let generation = try Self.manifest(of: path, cipher: store.cipher).generation
      files.start()
      try write.run(on: store)
      let calls = files.stop()
      #expect(calls.filter { $0.operation == "syncDirectory" }.isEmpty, "\(calls)")
      #expect(calls.filter { $0.operation == "rename" }.isEmpty, "\(calls)")
      #expect(calls.filter { $0.path.hasSuffix(CaskFormat.manifestFileName) }.isEmpty, "\(calls)")
      #expect(calls.filter { $0.operation == "removeFile" && $0.onCaller }.isEmpty, "\(calls)")
      #expect(try Self.manifest(of: path, cipher: store.cipher).generation == generation)
    }
  }

  @Test(
    "a crash after the first write, its stale hint still in place, opens with every write: the hint is not trusted",
    arguments: FirstWrite.allCases)
  func crashBeforeHintRemoval(_ write: FirstWrite) throws {
    try Self.withClosedStore("resume-first-write") { directory, path, keys in
      let files = GatedHintRemoval()
      var options = Self.options
      options.fileSystem = files
      let store = try CaskStore(path: path, keys: keys, options: options)
      defer { try? store.close() }
      files.gated.store(true, ordering: .releasing)
      defer { files.release() }
      try write.run(on: store)
      // The hint of the shorter segment is still there: a crash now leaves it.
      #expect(FileManager.default.fileExists(atPath: "\(path)/\(Segment.hintName(id: 1))"))
      let reopened = try Self.openCrashImage(of: path, in: directory, keys: keys)
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.segmentsFromHints == 0)
      #expect(try reopened.get("a") == nil)
      #expect(try reopened.get("b") == Data("2".utf8))
      #expect(try reopened.get("c") == Data("3".utf8))
    }
  }

  @Test("a crash that loses the first write leaves the segment at its hint's length: the hint serves again")
  func lostFirstWriteTrustsTheHintAgain() throws {
    try Self.withClosedStore("resume-lost-write") { directory, path, keys in
      let segment = "\(path)/\(Segment.fileName(id: 1))"
      let length = try FileDamage.size(of: segment)
      let files = GatedHintRemoval()
      var options = Self.options
      options.fileSystem = files
      let store = try CaskStore(path: path, keys: keys, options: options)
      defer { try? store.close() }
      files.gated.store(true, ordering: .releasing)
      defer { files.release() }
      try store.put(Data("3".utf8), forKey: "c")
      // The record's pages lost: the file is as the clean close left it.
      let image = directory.file("lost.cask")
      try HookedFileSystem.copyStore(path, to: image)
      try FileDamage.truncate("\(image)/\(Segment.fileName(id: 1))", to: length)
      let before = try FileDamage.files(ofStore: image)
      let reopened = try CaskStore(path: image, keys: keys, options: Self.options)
      #expect(reopened.stats().recovery.isClean)
      #expect(reopened.stats().recovery.segmentsFromHints == 1)
      #expect(try reopened.get("c") == nil)
      #expect(try reopened.get("b") == Data("2".utf8))
      try reopened.close()
      #expect(try FileDamage.files(ofStore: image) == before)
    }
  }

  @Test(
    "the first write removes no file on any thread: the stale hint stays until close renames the new one over it",
    arguments: FirstWrite.allCases)
  func firstWriteLeavesTheStaleHintToTheNextHint(_ write: FirstWrite) throws {
    try Self.withClosedStore("resume-hint-stays") { _, path, keys in
      let hint = "\(path)/\(Segment.hintName(id: 1))"
      let staleLength = try FileDamage.size(of: hint)
      let files = FileCallRecorder()
      var options = Self.options
      options.fileSystem = files
      let store = try CaskStore(path: path, keys: keys, options: options)
      defer { try? store.close() }
      files.start()
      try write.run(on: store)
      // Whatever the write queued has run: no removal beside the writes that follow.
      store.hintQueue.drain()
      let calls = files.stop()
      #expect(calls.filter { $0.operation == "removeFile" }.isEmpty, "\(calls)")
      #expect(try FileDamage.size(of: hint) == staleLength)
      try store.close()
      // Close wrote the grown segment's hint in its place, which the next open uses.
      #expect(!FileManager.default.fileExists(atPath: hint + CaskFormat.staleHintSuffix))
      let reopened = try CaskStore(path: path, keys: keys, options: Self.options)
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.segmentsFromHints == 1)
      #expect(try reopened.get("c") == Data("3".utf8))
      #expect(try reopened.get("b") == Data("2".utf8))
    }
  }

  /// The manifest of the closed store at `path`, decoded.
  static func manifest(of path: String, keys: RNCryptor.Keys) throws -> Manifest {
    var options = Self.options
    options.readOnly = true
    let reader = try CaskStore(path: path, keys: keys, options: options)
    defer { try? reader.close() }
    return try manifest(of: path, cipher: reader.cipher)
  }

  /// The manifest of the store at `path`, decoded with `cipher`, the store's.
  static func manifest(of path: String, cipher: RecordCipher) throws -> Manifest {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(CaskFormat.manifestFileName)"))
    return try Manifest.decode(bytes, cipher: cipher)
  }
}

/// The real file system, noting every call but reads and segment writes while started: its
/// operation, path, and whether it ran on the thread that called `start()`.
final class FileCallRecorder: ForwardingFileSystem, @unchecked Sendable {
  struct Call: CustomStringConvertible {
    var operation: String
    var path: String
    var onCaller: Bool
    var description: String { "\(operation) \(path)\(onCaller ? "" : " (another thread)")" }
  }

  private let recording = Locked<(caller: pthread_t?, calls: [Call])>((nil, []))

  func start() { recording.withLock { $0 = (pthread_self(), []) } }

  func stop() -> [Call] {
    recording.withLock { state in
      defer { state = (nil, []) }
      return state.calls
    }
  }

  private func note(_ operation: String, _ path: String) {
    recording.withLock { state in
      guard let caller = state.caller else { return }
      state.calls.append(Call(operation: operation, path: path, onCaller: pthread_equal(caller, pthread_self()) != 0))
    }
  }

  override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
    note("open", path)
    return try super.open(path, mode: mode)
  }

  override func removeFile(_ path: String) throws {
    note("removeFile", path)
    try super.removeFile(path)
  }

  override func rename(_ source: String, to destination: String) throws {
    note("rename", destination)
    try super.rename(source, to: destination)
  }

  override func renameNoReplace(_ source: String, to destination: String) throws {
    note("rename", destination)
    try super.renameNoReplace(source, to: destination)
  }

  override func syncDirectory(_ path: String) throws {
    note("syncDirectory", path)
    try super.syncDirectory(path)
  }
}

/// The real file system, except that replacing the manifest fails while `failing` is set, as
/// on a full disk.
final class FailingManifestRename: ForwardingFileSystem, @unchecked Sendable {
  let failing = Atomic(false)

  override func rename(_ source: String, to destination: String) throws {
    if failing.load(ordering: .acquiring) && destination.hasSuffix("/" + CaskFormat.manifestFileName) {
      throw CaskError.io(operation: "rename", path: destination, errno: ENOSPC)
    }
    try super.rename(source, to: destination)
  }
}

/// The real file system, except that removing a hint (under its own name or a temporary one)
/// waits, while `gated` is set, until `release()` (or 10 seconds, noted in `timedOut`).
final class GatedHintRemoval: ForwardingFileSystem, @unchecked Sendable {
  let gated = Atomic(false)
  private let timedOut = Atomic(false)
  private let gate = DispatchSemaphore(value: 0)

  /// Whether a removal waited 10 seconds for `release()`.
  var didTimeOut: Bool { timedOut.load(ordering: .acquiring) }

  func release() {
    gated.store(false, ordering: .releasing)
    gate.signal()
  }

  override func removeFile(_ path: String) throws {
    if gated.load(ordering: .acquiring), path.contains(".\(CaskFormat.hintExtension)") {
      if gate.wait(timeout: .now() + 10) == .timedOut {
        timedOut.store(true, ordering: .releasing)
      } else {
        gate.signal()
      }
    }
    try super.removeFile(path)
  }
}

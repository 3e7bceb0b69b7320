import CaskTestSupport
import Foundation
import RNCryptorCodec
import Synchronization
import Testing

@testable import CaskEngine

/// A writable open of a cleanly closed store resumes its last segment without writing: the
/// hint and the manifest a clean close left still describe it. The first write removes the
/// hint and lists the segment as active before the segment grows (Docs/FORMAT.md, "Opening a
/// store", step 9).
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
  }

  @Test(
    "after the first write the hint is gone and the manifest lets the segment grow: a crash then opens cleanly",
    arguments: FirstWrite.allCases)
  func firstWriteListsSegmentActive(_ write: FirstWrite) throws {
    try Self.withClosedStore("resume-first-write") { directory, path, keys in
      let store = try CaskStore(path: path, keys: keys, options: Self.options)
      defer { try? store.close() }
      switch write {
      case .put: try store.put(Data("3".utf8), forKey: "c")
      case .streamedBatch: try store.streamedBatch { batch in _ = try batch.put(Data("3".utf8), forKey: "c") }
      }
      #expect(!FileManager.default.fileExists(atPath: "\(path)/\(Segment.hintName(id: 1))"))
      let reopened = try Self.openCrashImage(of: path, in: directory, keys: keys)
      defer { try? reopened.close() }
      #expect(try reopened.get("a") == nil)
      #expect(try reopened.get("b") == Data("2".utf8))
      #expect(try reopened.get("c") == Data("3".utf8))
    }
  }

  @Test("the first write does not wait while the file system frees the old hint, and close removes it")
  func firstWriteLeavesHintRemovalToTheBackground() throws {
    try Self.withClosedStore("resume-hint-removal") { directory, path, keys in
      let files = GatedHintRemoval()
      var options = Self.options
      options.fileSystem = files
      let store = try CaskStore(path: path, keys: keys, options: options)
      defer { try? store.close() }
      files.gated.store(true, ordering: .releasing)
      try store.put(Data("3".utf8), forKey: "c")
      // The put returned while every removal of a hint was held: it removed none itself.
      #expect(!files.didTimeOut)
      let hint = "\(path)/\(Segment.hintName(id: 1))"
      #expect(!FileManager.default.fileExists(atPath: hint))
      #expect(FileManager.default.fileExists(atPath: hint + CaskFormat.staleHintSuffix))
      // A crash now leaves the renamed hint, which the next open removes and never reads.
      let reopened = try Self.openCrashImage(of: path, in: directory, keys: keys)
      #expect(try reopened.get("c") == Data("3".utf8))
      #expect(try reopened.get("b") == Data("2".utf8))
      try reopened.close()
      #expect(
        !FileManager.default.fileExists(
          atPath: directory.file("image.cask") + "/" + Segment.hintName(id: 1) + CaskFormat.staleHintSuffix))
      files.release()
      try store.close()
      #expect(!FileManager.default.fileExists(atPath: hint + CaskFormat.staleHintSuffix))
      #expect(!files.didTimeOut)
    }
  }

  @Test("a first write whose manifest cannot be written fails, applies nothing, and the next one succeeds")
  func manifestFailureAtFirstWrite() throws {
    try Self.withClosedStore("resume-manifest-failure") { directory, path, keys in
      let files = FailingManifestRename()
      var options = Self.options
      options.fileSystem = files
      let store = try CaskStore(path: path, keys: keys, options: options)
      files.failing.store(true, ordering: .releasing)
      #expect(throws: CaskError.self) { try store.put(Data("3".utf8), forKey: "c") }
      #expect(try store.get("c") == nil)
      files.failing.store(false, ordering: .releasing)
      try store.put(Data("4".utf8), forKey: "d")
      try store.close()

      let reopened = try CaskStore(path: path, keys: keys, options: Self.options)
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.isClean)
      #expect(try reopened.get("c") == nil)
      #expect(try reopened.get("d") == Data("4".utf8))
      #expect(try reopened.get("b") == Data("2".utf8))
    }
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

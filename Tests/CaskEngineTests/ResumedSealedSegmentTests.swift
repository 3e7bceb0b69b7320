import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A store whose manifest lists every segment as sealed, as an older version's clean close
/// left it, still opens without writing; its first write retires the resumed segment's hint
/// and lists the segment as active before the segment grows, since the next open would
/// refuse a sealed segment that grew (Docs/FORMAT.md, "Opening a store", step 9).
@Suite("A store closed with every segment sealed")
struct ResumedSealedSegmentTests {
  /// `ResumedSegmentTests.makeStore`'s store, its manifest then rewritten with every segment
  /// sealed at its length, as an older version's close wrote it.
  static func withSealedStore(
    _ name: String, _ body: (TemporaryDirectory, String, RNCryptor.Keys) throws -> Void
  ) throws {
    try ResumedSegmentTests.withClosedStore(name) { directory, path, keys in
      var options = ResumedSegmentTests.options
      options.readOnly = true
      let cipher = try CaskStore(path: path, keys: keys, options: options).cipher
      var manifest = try ResumedSegmentTests.manifest(of: path, cipher: cipher)
      for index in manifest.segments.indices { manifest.segments[index].isActive = false }
      try Data(manifest.encoded(cipher: cipher)).write(
        to: URL(fileURLWithPath: "\(path)/\(CaskFormat.manifestFileName)"))
      try body(directory, path, keys)
    }
  }

  @Test("it opens, is read and closes without any file changing")
  func untouchedOpenWritesNothing() throws {
    try Self.withSealedStore("sealed-untouched") { _, path, keys in
      let before = try FileDamage.files(ofStore: path)
      let store = try CaskStore(path: path, keys: keys, options: ResumedSegmentTests.options)
      #expect(store.stats().recovery.segmentsFromHints == 1)
      #expect(try store.get("b") == Data("2".utf8))
      try store.close()
      #expect(try FileDamage.files(ofStore: path) == before)
    }
  }

  @Test(
    "its first write lists the segment as active and retires the hint first: a crash then opens with every write",
    arguments: ResumedSegmentTests.FirstWrite.allCases)
  func firstWriteListsSegmentActive(_ write: ResumedSegmentTests.FirstWrite) throws {
    try Self.withSealedStore("sealed-first-write") { directory, path, keys in
      let store = try CaskStore(path: path, keys: keys, options: ResumedSegmentTests.options)
      defer { try? store.close() }
      try write.run(on: store)
      #expect(!FileManager.default.fileExists(atPath: "\(path)/\(Segment.hintName(id: 1))"))
      let manifest = try ResumedSegmentTests.manifest(of: path, cipher: store.cipher)
      #expect(manifest.segments.map(\.isActive) == [true])
      let reopened = try ResumedSegmentTests.openCrashImage(of: path, in: directory, keys: keys)
      defer { try? reopened.close() }
      #expect(try reopened.get("a") == nil)
      #expect(try reopened.get("b") == Data("2".utf8))
      #expect(try reopened.get("c") == Data("3".utf8))
    }
  }

  @Test("a first write whose manifest cannot be written fails, applies nothing, and the next one succeeds")
  func manifestFailureAtFirstWrite() throws {
    try Self.withSealedStore("sealed-manifest-failure") { _, path, keys in
      let files = FailingManifestRename()
      var options = ResumedSegmentTests.options
      options.fileSystem = files
      let store = try CaskStore(path: path, keys: keys, options: options)
      files.failing.store(true, ordering: .releasing)
      #expect(throws: CaskError.self) { try store.put(Data("3".utf8), forKey: "c") }
      #expect(try store.get("c") == nil)
      files.failing.store(false, ordering: .releasing)
      try store.put(Data("4".utf8), forKey: "d")
      try store.close()

      let reopened = try CaskStore(path: path, keys: keys, options: ResumedSegmentTests.options)
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.isClean)
      #expect(try reopened.get("c") == nil)
      #expect(try reopened.get("d") == Data("4".utf8))
      #expect(try reopened.get("b") == Data("2".utf8))
    }
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Synchronization
import Testing

@testable import CaskEngine

/// Whole files rolled back, cut, removed or planted by someone without the password (format
/// version 3, Docs/FORMAT.md section 6a): open compares the files with the sealed manifest,
/// refuses the store with `integrityViolation`, and opens it read-only only when asked to.
@Suite("The manifest catches segments cut, rolled back, removed or planted")
struct ManifestTests {
  static let options = CaskStore.Options(durability: .never, segmentSizeLimit: 300, autoCompaction: nil)

  static func segment(_ path: String, _ id: UInt32) -> String { "\(path)/\(Segment.fileName(id: id))" }

  static func expectRefused(_ path: String, keys: RNCryptor.Keys, _ reason: String) {
    do {
      let store = try CaskStore(path: path, keys: keys, options: options)
      try? store.close()
      Issue.record("the store opened")
    } catch CaskError.integrityViolation(_, let found) {
      #expect(found.contains(reason), "\(found)")
    } catch {
      Issue.record("expected integrityViolation, got \(error)")
    }
  }

  static func copy(_ source: String, to destination: String) throws {
    try? FileManager.default.removeItem(atPath: destination)
    try FileManager.default.copyItem(atPath: source, toPath: destination)
  }

  @Test("an older copy of a segment put back under the current header is refused; salvage opens it read-only")
  func segmentRollback() throws {
    try withTemporaryDirectory("manifest-rollback") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      // Room for both records in segment 1, which grows after the copy is taken.
      let roomy = CaskStore.Options(durability: .never, autoCompaction: nil)
      var store = try CaskStore(path: path, keys: keys, options: roomy)
      try store.put(Data("1".utf8), forKey: "a")
      try store.close()
      try Self.copy(Self.segment(path, 1), to: directory.file("old.seg"))
      store = try CaskStore(path: path, keys: keys, options: roomy)
      try store.delete("a")
      try store.close()
      try Self.copy(directory.file("old.seg"), to: Self.segment(path, 1))
      try? FileManager.default.removeItem(atPath: "\(path)/\(Segment.hintName(id: 1))")

      Self.expectRefused(path, keys: keys, "shorter than")
      var salvage = Self.options
      salvage.allowIntegrityViolations = true
      let salvaged = try CaskStore(path: path, keys: keys, options: salvage)
      defer { try? salvaged.close() }
      #expect(!salvaged.stats().recovery.integrityViolations.isEmpty)
      #expect(!salvaged.stats().recovery.isClean)
      #expect(throws: CaskError.readOnly) { try salvaged.put(Data("x".utf8), forKey: "x") }
      #expect(try !salvaged.verify().isClean)
    }
  }

  @Test("a segment cut short after a clean close is refused, so a deleted key cannot come back")
  func truncationAfterCleanClose() throws {
    try withTemporaryDirectory("manifest-truncate") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let store = try CaskStore(path: path, keys: keys, options: CaskStore.Options(durability: .never))
      try store.put(Data("1".utf8), forKey: "a")
      try store.delete("a")
      try store.close()
      let size = try FileDamage.size(of: Self.segment(path, 1))
      try FileDamage.truncate(Self.segment(path, 1), to: size - 100)
      Self.expectRefused(path, keys: keys, "shorter than")
    }
  }

  @Test("a segment removed is refused")
  func segmentRemoved() throws {
    try withTemporaryDirectory("manifest-removed") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let store = try CaskStore(path: path, keys: keys, options: Self.options)
      try store.put(Data("1".utf8), forKey: "a")
      try store.delete("a")
      try store.close()
      try FileManager.default.removeItem(atPath: Self.segment(path, 2))
      Self.expectRefused(path, keys: keys, "missing")
    }
  }

  @Test("a segment compaction removed, put back later, is refused")
  func compactedSegmentPlantedBack() throws {
    try withTemporaryDirectory("manifest-planted") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let store = try CaskStore(path: path, keys: keys, options: Self.options)
      try store.put(Data("1".utf8), forKey: "a")
      try store.delete("a")
      try store.put(Data("2".utf8), forKey: "b")
      try Self.copy(Self.segment(path, 1), to: directory.file("old.seg"))
      try store.compact()
      try store.close()
      #expect(!FileManager.default.fileExists(atPath: Self.segment(path, 1)))
      try Self.copy(directory.file("old.seg"), to: Self.segment(path, 1))
      Self.expectRefused(path, keys: keys, "does not list")
    }
  }

  @Test("a damaged or missing manifest is refused; a store without segments needs none")
  func manifestDamagedOrMissing() throws {
    try withTemporaryDirectory("manifest-damaged") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let store = try CaskStore(path: path, keys: keys, options: Self.options)
      try store.put(Data("1".utf8), forKey: "a")
      try store.close()
      let manifest = "\(path)/\(CaskFormat.manifestFileName)"
      try FileDamage.flipByte(at: 40, in: manifest)
      Self.expectRefused(path, keys: keys, "authenticate")
      try FileManager.default.removeItem(atPath: manifest)
      Self.expectRefused(path, keys: keys, "missing")

      let empty = directory.file("empty.cask")
      try CaskStore(path: empty, keys: keys, options: Self.options).close()
      try FileManager.default.removeItem(atPath: "\(empty)/\(CaskFormat.manifestFileName)")
      let reopened = try CaskStore(path: empty, keys: keys, options: Self.options)
      #expect(reopened.stats().recovery.isClean)
      try reopened.close()
    }
  }

  @Test(
    "a manifest at the last generations is refused instead of trapping: 2^64 - 1 is malformed, 2^64 - 2 leaves none to write",
    arguments: [(UInt64.max, "malformed manifest"), (UInt64.max - 1, "no manifest generations left")])
  func generationAtLimitIsRefused(generation: UInt64, reason: String) throws {
    try withTemporaryDirectory("manifest-generation") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let store = try CaskStore(path: path, keys: keys, options: Self.options)
      try store.put(Data("1".utf8), forKey: "a")
      let cipher = store.keyRing.withLock { $0.current }
      try store.close()
      let file = "\(path)/\(CaskFormat.manifestFileName)"
      var manifest = try Manifest.decode(Data(contentsOf: URL(fileURLWithPath: file)), cipher: cipher)
      manifest.generation = generation
      try Data(manifest.encoded(cipher: cipher)).write(to: URL(fileURLWithPath: file))
      Self.expectRefused(path, keys: keys, reason)
    }
  }

  @Test("verify finds a sealed segment cut short while the store is open, which open could not see")
  func verifyFindsSegmentCutWhileOpen() throws {
    try withTemporaryDirectory("manifest-verify-cut") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let store = try CaskStore(path: path, keys: keys, options: Self.options)
      defer { try? store.close() }
      for round in 0..<6 { try store.put(Data(repeating: UInt8(round), count: 40), forKey: "k\(round)") }
      #expect(try store.verify().isClean)
      // Segment 1 is sealed (the limit is 300 bytes); its last record is cut off whole, so
      // the records that are left read as a clean segment.
      let sealed = Self.segment(path, 1)
      let size = try FileDamage.size(of: sealed)
      let records = TamperDetectionTests.records(try TamperDetectionTests.read(sealed))
      let cut = try #require(records.last).lowerBound
      try FileDamage.truncate(sealed, to: cut)
      #expect(cut < size)
      let report = try store.verify()
      #expect(report.damage.contains { $0.file == Segment.fileName(id: 1) && $0.reason.contains("sealed segment") })
    }
  }

  @Test("verify finds the manifest put back from an older copy while the store is open")
  func verifyFindsOlderManifest() throws {
    try withTemporaryDirectory("manifest-verify-older") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let store = try CaskStore(path: path, keys: keys, options: Self.options)
      defer { try? store.close() }
      try store.put(Data("1".utf8), forKey: "a")
      let manifest = "\(path)/\(CaskFormat.manifestFileName)"
      try Self.copy(manifest, to: directory.file("old.manifest"))
      for round in 0..<8 { try store.put(Data(repeating: UInt8(round), count: 40), forKey: "k\(round)") }
      #expect(try store.verify().isClean)
      try Self.copy(directory.file("old.manifest"), to: manifest)
      let report = try store.verify()
      #expect(report.damage.contains { $0.file == CaskFormat.manifestFileName && $0.reason.contains("older") })
      try FileDamage.flipByte(at: 40, in: manifest)
      #expect(try store.verify().damage.contains { $0.file == CaskFormat.manifestFileName })
    }
  }

  @Test("sequence numbers never go down, even after compaction dropped the newest records")
  func sequenceNeverGoesDown() throws {
    try withTemporaryDirectory("manifest-sequence") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      var store = try CaskStore(path: path, keys: keys, options: Self.options)
      for round in 0..<5 { try store.put(Data("\(round)".utf8), forKey: "a") }
      try store.delete("a")
      try store.compact()
      try store.close()
      store = try CaskStore(path: path, keys: keys, options: Self.options)
      try store.put(Data("new".utf8), forKey: "b")
      try store.close()
      let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(CaskFormat.manifestFileName)")))
      let reopened = try CaskStore(path: path, keys: keys, options: Self.options)
      defer { try? reopened.close() }
      let manifest = try Manifest.decode(Data(bytes), cipher: reopened.cipher)
      #expect(manifest.lastSequence == 7)
    }
  }
}

/// A whole store directory put back from an older copy is consistent in itself; only an
/// integrity token kept elsewhere tells that it is older.
@Suite("An integrity token catches a whole-directory rollback")
struct IntegrityTokenTests {
  static let options = CaskStore.Options(durability: .never, autoCompaction: nil)

  @Test("a store rolled back as a whole is refused against a later token, and accepted against an earlier one")
  func wholeDirectoryRollback() throws {
    try withTemporaryDirectory("token-rollback") { directory in
      let path = directory.file("store.cask")
      let old = directory.file("old.cask")
      let keys = try RNCryptor.Keys.random()
      var store = try CaskStore(path: path, keys: keys, options: Self.options)
      try store.put(Data("1".utf8), forKey: "a")
      try store.close()
      try FileManager.default.copyItem(atPath: path, toPath: old)
      store = try CaskStore(path: path, keys: keys, options: Self.options)
      let earlier = try store.integrityToken()
      try store.delete("a")
      try store.sync()
      let token = try store.integrityToken()
      try store.checkFreshness(against: token)
      try store.checkFreshness(against: earlier)
      try store.close()

      // The whole directory put back: opens by itself, but not against the token.
      try FileManager.default.removeItem(atPath: path)
      try FileManager.default.copyItem(atPath: old, toPath: path)
      var expecting = Self.options
      expecting.expectedIntegrityToken = token
      #expect {
        try CaskStore(path: path, keys: keys, options: expecting)
      } throws: { error in
        if case CaskError.integrityViolation(_, let reason) = error { return reason.contains("older") }
        return false
      }
      let plain = try CaskStore(path: path, keys: keys, options: Self.options)
      #expect(try plain.get("a") == Data("1".utf8))
      #expect(throws: CaskError.self) { try plain.checkFreshness(against: token) }
      try plain.close()
    }
  }

  @Test("a token of another store, or not a token at all, is refused")
  func foreignToken() throws {
    try withTemporaryDirectory("token-foreign") { directory in
      let keys = try RNCryptor.Keys.random()
      let mine = try CaskStore(path: directory.file("mine.cask"), keys: keys, options: Self.options)
      defer { try? mine.close() }
      let theirs = try CaskStore(path: directory.file("theirs.cask"), keys: keys, options: Self.options)
      defer { try? theirs.close() }
      try theirs.put(Data("x".utf8), forKey: "x")
      #expect(throws: CaskError.self) { try mine.checkFreshness(against: try theirs.integrityToken()) }
      #expect(throws: CaskError.self) { try mine.checkFreshness(against: "not a token") }
    }
  }
}

/// Seals a segment (two puts, the second of which fills it) just before compaction removes its
/// first input, then copies the store right after that removal: what a crash at that moment
/// leaves.
final class SealDuringInputRemoval: ForwardingFileSystem, @unchecked Sendable {
  let armed = Atomic(false)
  let store = Locked<CaskStore?>(nil)
  let image: String
  let copied = Atomic(false)
  let copyFailure = Locked<String?>(nil)

  init(image: String) {
    self.image = image
    super.init()
  }

  override func removeFile(_ path: String) throws {
    let isSegment = path.hasSuffix("." + CaskFormat.segmentExtension)
    if isSegment, armed.exchange(false, ordering: .acquiringAndReleasing), let store = store.withLock({ $0 }) {
      try store.put(Data(repeating: 8, count: 400), forKey: "filler")
      try store.put(Data(repeating: 9, count: 400), forKey: "filler")
    }
    try super.removeFile(path)
    if isSegment, !copied.exchange(true, ordering: .acquiringAndReleasing) {
      // Compaction stops removing inputs at an error and does not rethrow it: a failed copy
      // is kept here for the test to report, instead of an image missing some files.
      do {
        try HookedFileSystem.copyStore(String(path[..<path.lastIndex(of: "/")!]), to: image)
      } catch {
        copyFailure.withLock { $0 = "\(error)" }
        throw error
      }
    }
  }
}

@Suite("A crash while compaction removes its inputs")
struct CompactionInputRemovalTests {
  @Test("a segment sealed while compaction removes its inputs names them retired, so a crash then opens cleanly")
  func sealDuringInputRemovalOpensAfterCrash() throws {
    try withTemporaryDirectory("manifest-retiring") { directory in
      let files = SealDuringInputRemoval(image: directory.file("image.cask"))
      let keys = try RNCryptor.Keys.random()
      let options = CaskStore.Options(durability: .never, segmentSizeLimit: 300, autoCompaction: nil, fileSystem: files)
      let store = try CaskStore(path: directory.file("store.cask"), keys: keys, options: options)
      for round in 0..<6 { try store.put(Data(repeating: UInt8(round), count: 60), forKey: "k\(round % 2)") }
      files.store.withLock { $0 = store }
      files.armed.store(true, ordering: .releasing)
      _ = try store.compact()
      files.store.withLock { $0 = nil }
      try store.close()
      let copied = files.copied.load(ordering: .acquiring)
      #expect(copied)
      #expect(files.copyFailure.withLock { $0 } == nil)
      let reopened = try CaskStore(
        path: directory.file("image.cask"), keys: keys, options: CaskStore.Options(durability: .never))
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.integrityViolations.isEmpty)
      #expect(try reopened.get("k0") == Data(repeating: 4, count: 60))
      #expect(try reopened.get("filler") == Data(repeating: 9, count: 400))
    }
  }
}

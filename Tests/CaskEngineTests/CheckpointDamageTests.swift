import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A checkpoint that is torn, damaged, from another time than the log or from another store
/// is never trusted: open says why in `checkpointIgnored` and indexes from the hints and the
/// log, losing nothing; damage in a page of slots, read when first touched, stops the index
/// with an error there and retires the checkpoint. A planted bug (open trusting any checkpoint that authenticates) shows
/// that these tests would catch one trusted blindly.
@Suite("Checkpoint: a torn, damaged, older, newer or foreign checkpoint is never trusted")
struct CheckpointDamageTests {
  /// A cleanly closed store with a checkpoint, in its own directory, and what it holds.
  private struct Pristine {
    let directory: TemporaryDirectory
    let path: String
    let model: [String: Data]

    init(_ label: String, seed: UInt64 = 3) throws {
      directory = try TemporaryDirectory(label)
      path = directory.file("pristine")
      let store = try CheckpointFixture.open(path)
      model = try CheckpointFixture.fill(store, count: 300, seed: seed)
      try store.close()
    }

    /// A copy of the store under a new name.
    func copy(_ name: String) throws -> String {
      let copy = directory.file(name)
      try CheckpointFixture.copy(path, to: copy)
      return copy
    }
  }

  /// Whether the store serves exactly `model`: its keys, their values and its count (a read
  /// that fails counts as not serving it).
  private static func serves(_ store: CaskStore, _ model: [String: Data]) -> Bool {
    (try? store.keys()) == model.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
      && store.count == model.count && (try? CheckpointFixture.contents(of: store)) == model
  }

  /// Opens `path` read-only, then writable: the checkpoint is ignored, with a reason, and the
  /// store serves `model` all the same.
  private static func expectIgnored(
    _ path: String, _ model: [String: Data], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    for readOnly in [true, false] {
      let store = try CheckpointFixture.open(path, readOnly: readOnly)
      let recovery = store.stats().recovery
      #expect(recovery.checkpointIgnored != nil, sourceLocation: sourceLocation)
      #expect(recovery.segmentsFromCheckpoint == 0, sourceLocation: sourceLocation)
      #expect(serves(store, model), sourceLocation: sourceLocation)
      try store.close()
    }
  }

  /// `expectIgnored`, or, for damage in a page of slots (read when first touched, not at
  /// open): the checkpoint is used, every get answers the model's value or throws
  /// `CaskError.corrupt` naming the checkpoint, a listing (which touches every page) throws,
  /// and a writable store retires the checkpoint so that its next open serves `model`.
  private static func expectIgnoredOrRefused(
    _ path: String, _ model: [String: Data], sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    for readOnly in [true, false] {
      let store = try CheckpointFixture.open(path, readOnly: readOnly)
      if store.stats().recovery.checkpointIgnored != nil {
        #expect(serves(store, model), sourceLocation: sourceLocation)
        try store.close()
        continue
      }
      for (key, value) in model {
        do {
          #expect(try store.get(key) == value, "answered from a damaged page", sourceLocation: sourceLocation)
        } catch CaskError.corrupt(let file, _, _) {
          #expect(file.hasSuffix(CaskFormat.checkpointFileName), sourceLocation: sourceLocation)
        }
      }
      #expect(throws: CaskError.self, sourceLocation: sourceLocation) { try store.keys() }
      try store.close()
      if !readOnly {
        #expect(!FileManager.default.fileExists(atPath: CheckpointFixture.file(path)), sourceLocation: sourceLocation)
        let reopened = try CheckpointFixture.open(path, readOnly: true)
        #expect(serves(reopened, model), sourceLocation: sourceLocation)
        try reopened.close()
      }
    }
  }

  @Test("the pristine checkpoint is used (the baseline of the tests below)")
  func pristineIsUsed() throws {
    let pristine = try Pristine("checkpoint-pristine")
    defer { pristine.directory.remove() }
    let store = try CheckpointFixture.open(pristine.path, readOnly: true)
    #expect(store.stats().recovery.checkpointIgnored == nil)
    #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
    #expect(Self.serves(store, pristine.model))
    try store.close()
  }

  @Test("a checkpoint cut short at any length")
  func truncated() throws {
    let pristine = try Pristine("checkpoint-cut")
    defer { pristine.directory.remove() }
    let size = try FileDamage.size(of: CheckpointFixture.file(pristine.path))
    for length in [0, 4, 8, 11, 12, 13, 100, size / 3, size / 2, size - 33, size - 1] {
      let path = try pristine.copy("cut-\(length)")
      try FileDamage.truncate(CheckpointFixture.file(path), to: length)
      try Self.expectIgnored(path, pristine.model)
    }
  }

  @Test("a flipped byte anywhere in a checkpoint: ignored at open, or refused when its page is first touched")
  func flippedByte() throws {
    let pristine = try Pristine("checkpoint-flip")
    defer { pristine.directory.remove() }
    let size = try FileDamage.size(of: CheckpointFixture.file(pristine.path))
    for offset in [0, 7, 8, 11, 12, 13, 40, 200, size / 4, size / 2, (size * 3) / 4, size - 32, size - 1] {
      let path = try pristine.copy("flip-\(offset)")
      try FileDamage.flipByte(at: offset, in: CheckpointFixture.file(path))
      try Self.expectIgnoredOrRefused(path, pristine.model)
    }
  }

  @Test("a half-written checkpoint (CHECKPOINT.tmp) is removed by a writable open, never read")
  func halfWritten() throws {
    let pristine = try Pristine("checkpoint-tmp")
    defer { pristine.directory.remove() }
    let path = try pristine.copy("tmp")
    let temporary = CheckpointFixture.file(path) + CaskFormat.temporarySuffix
    let whole = try Data(contentsOf: URL(fileURLWithPath: CheckpointFixture.file(path)))
    try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: temporary))
    let store = try CheckpointFixture.open(path)
    #expect(store.stats().recovery.checkpointIgnored == nil)
    #expect(Self.serves(store, pristine.model))
    #expect(!FileManager.default.fileExists(atPath: temporary))
    try store.close()
  }

  @Test("an older checkpoint put back after a compaction is ignored")
  func olderAfterCompaction() throws {
    let pristine = try Pristine("checkpoint-older")
    defer { pristine.directory.remove() }
    let old = try Data(contentsOf: URL(fileURLWithPath: CheckpointFixture.file(pristine.path)))
    let store = try CheckpointFixture.open(pristine.path)
    let model = try CheckpointFixture.fill(store, count: 200, seed: 9).merging(pristine.model) { new, _ in new }
    _ = try store.compact()
    try store.close()
    try old.write(to: URL(fileURLWithPath: CheckpointFixture.file(pristine.path)))
    try Self.expectIgnored(pristine.path, model)
  }

  @Test("an older checkpoint with no compaction since is used, and the log after it replayed")
  func olderWithoutCompaction() throws {
    let pristine = try Pristine("checkpoint-older-kept")
    defer { pristine.directory.remove() }
    let old = try Data(contentsOf: URL(fileURLWithPath: CheckpointFixture.file(pristine.path)))
    let store = try CheckpointFixture.open(pristine.path)
    try store.put(Data("new".utf8), forKey: "after")
    try store.delete("key-1")
    var model = pristine.model
    model["after"] = Data("new".utf8)
    model["key-1"] = nil
    for (key, value) in try CheckpointFixture.fill(store, count: 100, seed: 5) { model[key] = value }
    try store.close()
    try old.write(to: URL(fileURLWithPath: CheckpointFixture.file(pristine.path)))
    let reopened = try CheckpointFixture.open(pristine.path, readOnly: true)
    #expect(reopened.stats().recovery.checkpointIgnored == nil)
    #expect(reopened.stats().recovery.segmentsFromCheckpoint > 0)
    #expect(Self.serves(reopened, model))
    try reopened.close()
  }

  /// A copy of the pristine store, and the checkpoint the store wrote after more writes:
  /// ahead of the copy's log and manifest.
  private static func newerCheckpoint(_ pristine: Pristine) throws -> (older: String, newer: Data) {
    let older = try pristine.copy("older")
    let store = try CheckpointFixture.open(pristine.path)
    try CheckpointFixture.fill(store, count: 200, seed: 11)
    try store.put(Data("newer".utf8), forKey: "only-in-the-newer-state")
    try store.close()
    return (older, try Data(contentsOf: URL(fileURLWithPath: CheckpointFixture.file(pristine.path))))
  }

  @Test("a newer checkpoint in an older copy of the store (ahead of its log) is ignored")
  func newer() throws {
    let pristine = try Pristine("checkpoint-newer")
    defer { pristine.directory.remove() }
    let (older, newer) = try Self.newerCheckpoint(pristine)
    try newer.write(to: URL(fileURLWithPath: CheckpointFixture.file(older)))
    try Self.expectIgnored(older, pristine.model)
  }

  @Test("a checkpoint a writable open ignored is removed before its writes, which would make it pass later")
  func ignoredIsRemovedBeforeWrites() throws {
    let pristine = try Pristine("checkpoint-ignored-removed")
    defer { pristine.directory.remove() }
    let older = try pristine.copy("older")
    // One record more than the copy in the same segment: ahead of the copy's log only by the
    // covered segment's length and the manifest's generation, both of which writes catch up.
    let newer = try CheckpointFixture.open(pristine.path)
    try newer.put(Data("newer".utf8), forKey: "only-in-the-newer-state")
    try newer.close()
    try Data(contentsOf: URL(fileURLWithPath: CheckpointFixture.file(pristine.path)))
      .write(to: URL(fileURLWithPath: CheckpointFixture.file(older)))

    // Checkpoints off: nothing the store writes replaces the planted one (as when damage that
    // stays keeps a store from taking one, or a crash comes first).
    var options = CheckpointFixture.options()
    options.checkpoints = nil
    let store = try CaskStore(path: older, keys: CheckpointFixture.keys, options: options)
    #expect(store.stats().recovery.checkpointIgnored != nil)
    #expect(!FileManager.default.fileExists(atPath: CheckpointFixture.file(older)))
    // Enough log to seal the segment (a manifest of a later generation) and go on past it.
    var model = pristine.model
    var random = SeededRandom(seed: 21)
    for index in 0..<120 {
      let value = random.bytes(300)
      try store.put(value, forKey: "older-\(index)")
      model["older-\(index)"] = value
    }
    try store.close()
    let reopened = try CheckpointFixture.open(older, readOnly: true)
    #expect(reopened.stats().recovery.segmentsFromCheckpoint == 0)
    let served = Self.serves(reopened, model)
    #expect(served, "the next open trusted the checkpoint the writes caught up with")
    try reopened.close()
  }

  /// The checkpoint of another store opened with the same keys (its own data key).
  private static func otherStoreCheckpoint(_ pristine: Pristine) throws -> Data {
    let other = pristine.directory.file("other")
    let store = try CheckpointFixture.open(other)
    try CheckpointFixture.fill(store, count: 300, seed: 77)
    try store.close()
    return try Data(contentsOf: URL(fileURLWithPath: CheckpointFixture.file(other)))
  }

  /// The checkpoint of a fork: a copy of the store (the same data key and header) that went
  /// its own way, with other writes and a compaction.
  private static func forkCheckpoint(_ pristine: Pristine) throws -> Data {
    let fork = try pristine.copy("fork")
    let store = try CheckpointFixture.open(fork)
    try CheckpointFixture.fill(store, count: 250, seed: 78)
    try store.put(Data("fork".utf8), forKey: "only-in-the-fork")
    _ = try store.compact()
    try store.close()
    return try Data(contentsOf: URL(fileURLWithPath: CheckpointFixture.file(fork)))
  }

  @Test("the checkpoint of another store does not authenticate, and is ignored")
  func otherStore() throws {
    let pristine = try Pristine("checkpoint-other")
    defer { pristine.directory.remove() }
    let path = try pristine.copy("target")
    try Self.otherStoreCheckpoint(pristine).write(to: URL(fileURLWithPath: CheckpointFixture.file(path)))
    try Self.expectIgnored(path, pristine.model)
  }

  @Test("the checkpoint of a fork of the store (same key, other history) is ignored")
  func fork() throws {
    let pristine = try Pristine("checkpoint-fork")
    defer { pristine.directory.remove() }
    let path = try pristine.copy("target")
    try Self.forkCheckpoint(pristine).write(to: URL(fileURLWithPath: CheckpointFixture.file(path)))
    try Self.expectIgnored(path, pristine.model)
  }

  @Test("planted bug: an open that trusts any authentic checkpoint serves wrong contents from a newer or forked one")
  func plantedBlindTrustIsCaught() throws {
    let pristine = try Pristine("checkpoint-planted")
    defer { pristine.directory.remove() }
    let foreign = try Self.forkCheckpoint(pristine)
    let (older, newer) = try Self.newerCheckpoint(pristine)
    let foreignTarget = try pristine.copy("foreign-target")
    // `older` is the pristine state; the pristine directory itself has moved on.
    try FileManager.default.removeItem(atPath: foreignTarget)
    try CheckpointFixture.copy(older, to: foreignTarget)
    try foreign.write(to: URL(fileURLWithPath: CheckpointFixture.file(foreignTarget)))
    try newer.write(to: URL(fileURLWithPath: CheckpointFixture.file(older)))
    for path in [older, foreignTarget] {
      let blind = try CheckpointFixture.open(path, readOnly: true, checks: false)
      #expect(
        blind.stats().recovery.checkpointIgnored == nil,
        "the planted bug did not trust it: \(blind.stats().recovery.checkpointIgnored ?? "")")
      #expect(!Self.serves(blind, pristine.model), "a checkpoint trusted blindly went unnoticed")
      try blind.close()
    }
  }
}

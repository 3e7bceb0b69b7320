import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// Found in review (session 6), each pinned by the failure it caused: `close()` returned
/// normally after the periodic syncer's sync had failed (acknowledged writes lost without an
/// error), and groups were told apart by `String ==` (canonical equivalence) in a
/// transaction's `keys(inGroup:)` and in `groups()`, while the store tells them apart by bytes.
@Suite("close() after a failed background sync; groups by their bytes")
struct CloseAndGroupTests {
  private static func isSegment(_ path: String) -> Bool { path.contains(".seg") }

  /// Waits (without asserting on time) until `condition` holds, or gives up after many tries.
  private static func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<20_000 {
      if condition() { return true }
      usleep(1_000)
    }
    return condition()
  }

  // MARK: close() after a background sync failed

  @Test("close() reports that the periodic sync failed instead of returning as if everything were synced")
  func closeAfterFailedPeriodicSync() throws {
    let fileSystem = FaultyFileSystem(directories: ["/data"])
    let options = CaskStore.Options(
      durability: .periodic(seconds: 0.005), autoCompaction: nil, fileSystem: fileSystem)
    let store = try CaskStore(path: "/data/store.cask", password: "pw", options: options)
    try store.put(Data("first".utf8), forKey: "first")
    try store.sync()
    // From now on every sync of a segment fails (and loses its unsynced writes, as Linux does).
    fileSystem.inject(.init([.sync], paths: Self.isSegment))
    try store.put(Data("acknowledged".utf8), forKey: "acknowledged")
    // The periodic syncer tries, fails, and keeps the failure to itself.
    let failed = Self.eventually { store.writer.withLock { $0.failure != nil } }
    try #require(failed, "the periodic sync never ran")

    // close() promises to sync; it cannot have, so it must say so.
    var closeError: (any Error)?
    do { try store.close() } catch { closeError = error }
    #expect(closeError != nil, "close() returned normally although the writes since the last sync are not on disk")

    // What the app was led to believe was synced by close() is gone after a power cut.
    let survivor = fileSystem.crashLosingUnsyncedChanges()
    let reopened = try CaskStore(
      path: "/data/store.cask", password: "pw",
      options: CaskStore.Options(autoCompaction: nil, fileSystem: survivor))
    defer { try? reopened.close() }
    if closeError == nil {
      #expect(try reopened.get("acknowledged") != nil, "a put acknowledged before a successful close() was lost")
    }
  }

  // MARK: groups compared by String ==, not by bytes

  /// é as one code point, and e + combining acute: equal to Swift's `==`, other bytes.
  private static let composed = "caf\u{E9}"
  private static let decomposed = "cafe\u{301}"

  /// A fresh store for `body`, closed and removed after it.
  private static func withStore(_ body: (CaskStore) throws -> Void) throws {
    let directory = try TemporaryDirectory("groups-by-bytes")
    defer { directory.remove() }
    let store = try CaskStore(
      path: directory.file("store.cask"), password: "pw",
      options: CaskStore.Options(durability: .never, autoCompaction: nil))
    defer { try? store.close() }
    try body(store)
  }

  @Test("a transaction's keys(inGroup:) tells groups apart by their bytes, as the store does")
  func transactionGroupByBytes() throws {
    try Self.withStore { store in
      let (composed, decomposed) = (Self.composed, Self.decomposed)
      let twinKey = decomposed + "\u{0}" + "1"
      let seenInside = try store.transaction { transaction -> [String] in
        try transaction.put(Data("x".utf8), forKey: twinKey)
        return try transaction.keys(inGroup: composed)
      }
      let seenAfter = try store.keys(inGroup: composed)
      #expect(seenAfter.isEmpty)
      #expect(
        seenInside.map { Array($0.utf8) } == seenAfter.map { Array($0.utf8) },
        "inside the transaction group \"caf\\u{E9}\" listed a key of group \"cafe\\u{301}\"")
    }
  }

  @Test("groups() counts two groups whose names differ only in normalization separately")
  func groupsByBytes() throws {
    try Self.withStore { store in
      let (composed, decomposed) = (Self.composed, Self.decomposed)
      try store.put(Data("a".utf8), forKey: composed + "\u{0}1")
      try store.put(Data("b".utf8), forKey: decomposed + "\u{0}1")
      try store.put(Data("c".utf8), forKey: decomposed + "\u{0}2")
      #expect(store.count(inGroup: composed) == 1)
      #expect(store.count(inGroup: decomposed) == 2)
      #expect(
        store.groups()
          == [.init(group: composed, count: 1), .init(group: decomposed, count: 2)]
          .sorted { $0.group.utf8.lexicographicallyPrecedes($1.group.utf8) })
    }
  }
}

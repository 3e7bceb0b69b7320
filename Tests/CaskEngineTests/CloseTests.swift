import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// `close()`: it reports a sync that failed in the background or in an earlier close instead of
/// returning as if every acknowledged write were on disk, and a close made while another runs
/// returns only once the store is released.
@Suite("close() reports failed syncs and waits for a close under way")
struct CloseTests {
  private static let options = CaskStore.Options(durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)

  private static func isSegment(_ path: String) -> Bool { path.contains(".seg") }

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
    let failed = waitUntil { store.writer.withLock { $0.failure != nil } }
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

  @Test("a close() made while another runs returns only when that one has released the store")
  func secondCloseWaits() throws {
    try withStore(options: Self.options, label: "close-twice") { store, path throws in
      try store.put(Data("v".utf8), forKey: "k")
      let inClose = DispatchSemaphore(value: 0)
      let proceed = DispatchSemaphore(value: 0)
      let observation = store.observeChanges(
        { _ in },
        onClose: {
          inClose.signal()
          proceed.wait()
        })
      defer { observation.cancel() }
      let first = DispatchSemaphore(value: 0)
      Thread.detachNewThread {
        try? store.close()
        first.signal()
      }
      inClose.wait()
      let secondReturned = Locked(false)
      let second = DispatchSemaphore(value: 0)
      let secondFailure = Locked<String?>(nil)
      Thread.detachNewThread {
        do { try store.close() } catch { secondFailure.withLock { $0 = "\(error)" } }
        secondReturned.withLock { $0 = true }
        second.signal()
      }
      // Time for the second close to return early, as it did; the check holds however long it takes.
      usleep(100_000)
      #expect(!secondReturned.withLock { $0 }, "the second close() returned while the first was still closing")
      proceed.signal()
      first.wait()
      second.wait()
      #expect(secondFailure.withLock { $0 } == nil)
      let reopened = try CaskStore(path: path, password: "pw", options: Self.options)
      defer { try? reopened.close() }
      #expect(try reopened.get("k") == Data("v".utf8))
    }
  }

  @Test("every close() after one that failed throws its error")
  func closeAfterFailedClose() throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let store = try FaultWorkload.open(FaultWorkload.options(fileSystem, segmentSizeLimit: 4 << 20))
    try store.put(Data("one".utf8), forKey: "a")
    fileSystem.inject(FaultyFileSystem.Fault([.sync], times: 1))
    #expect(throws: CaskError.self) { try store.close() }
    #expect(throws: CaskError.self, "a later close() returned as if the store had closed cleanly") {
      try store.close()
    }
  }
}

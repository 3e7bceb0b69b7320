import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// `close()` promises that the periodic syncer "wakes and ends" (Docs/ARCHITECTURE.md,
/// section 8). A syncer that has not yet reached its wait when `close()` broadcasts (it was
/// just started, or it was busy in `sync()`) misses the wake-up and sleeps a whole interval,
/// and `close()` waits for it.
@Suite("Closing a store with periodic sync")
struct PeriodicSyncCloseTests {
  @Test("close right after open does not sleep out the periodic sync interval")
  func closeDoesNotWaitForTheInterval() throws {
    try withTemporaryDirectory("periodic-close") { directory throws in
      // An interval no test would wait out: a close that misses the wake-up hangs for an hour.
      let options = CaskStore.Options(durability: .periodic(seconds: 3600), autoCompaction: nil)
      let stores = 16
      let done = DispatchSemaphore(value: 0)
      let failures = Locked<[String]>([])
      for index in 0..<stores {
        let path = directory.file("s\(index).cask")
        // Each on its own thread (the test must not hang): open, then close at once.
        let thread = Thread {
          do {
            let store = try CaskStore(path: path, password: "pw", options: options)
            try store.close()
          } catch {
            failures.withLock { $0.append("store \(index): \(error)") }
          }
          done.signal()
        }
        thread.start()
      }
      var closed = 0
      // A liveness bound, not a measurement: a correct close takes milliseconds, a bad one an hour.
      let deadline = DispatchTime.now() + .seconds(30)
      for _ in 0..<stores where done.wait(timeout: deadline) == .success { closed += 1 }
      #expect(closed == stores, "\(stores - closed) of \(stores) close() calls still wait for the syncer's interval")
      #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
    }
  }
}

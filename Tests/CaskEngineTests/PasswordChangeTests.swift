import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// `changePassword(to:)` beside the store's writers.
@Suite("A password change does not stall writers")
struct PasswordChangeTests {
  @Test("a password change derives its keys while another writer holds the writer lock")
  func derivesBeforeTakingTheWriterLock() throws {
    try withStore(label: "passwd") { store, path in
      let holding = DispatchSemaphore(value: 0)
      let release = DispatchSemaphore(value: 0)
      let changed = DispatchSemaphore(value: 0)
      // A transaction holds the writer lock until released.
      Thread.detachNewThread {
        try? store.transaction { transaction in
          holding.signal()
          release.wait()
          try transaction.put(Data("v".utf8), forKey: "k")
        }
      }
      holding.wait()
      let before = RNCryptor.keyDerivations.load(ordering: .relaxed)
      Thread.detachNewThread {
        try? store.changePassword(to: "new password")
        changed.signal()
      }
      // Both derivations of the new password run while the lock is held elsewhere.
      let deadline = Date().addingTimeInterval(60)
      while RNCryptor.keyDerivations.load(ordering: .relaxed) < before + 2 && Date() < deadline { usleep(1_000) }
      let derived = RNCryptor.keyDerivations.load(ordering: .relaxed) - before
      release.signal()
      changed.wait()
      #expect(derived >= 2, "the password change waited for the writer lock before deriving its keys")
      try store.close()
      let reopened = try CaskStore(path: path, password: "new password", options: .init(durability: .never))
      #expect(try reopened.get("k") == Data("v".utf8))
      try reopened.close()
    }
  }
}

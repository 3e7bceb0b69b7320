import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// `changePassword(to:)` beside the store's writers.
@Suite("A password change does not stall writers")
struct PasswordChangeTests {
  /// Each derivation, and how many derivations a password change runs with it.
  static let derivations: [(CaskStore.KeyDerivation, Int)] = [
    (.rncryptor, 2),
    (.scrypt(RNCryptor.ScryptParameters(costFactor: 1024, blockSize: 8, parallelism: 1)), 1),
  ]

  @Test(
    "a password change derives its keys while another writer holds the writer lock", arguments: derivations)
  func derivesBeforeTakingTheWriterLock(_ derivation: CaskStore.KeyDerivation, runs: Int) throws {
    var options = CaskStore.Options(durability: .never)
    options.keyDerivation = derivation
    try withStore(options: options, label: "passwd") { store, path in
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
      // Every derivation of the new password runs while the lock is held elsewhere.
      let deadline = Date().addingTimeInterval(60)
      while RNCryptor.keyDerivations.load(ordering: .relaxed) < before + runs && Date() < deadline { usleep(1_000) }
      let derived = RNCryptor.keyDerivations.load(ordering: .relaxed) - before
      release.signal()
      changed.wait()
      #expect(derived >= runs, "the password change waited for the writer lock before deriving its keys")
      try store.close()
      let reopened = try CaskStore(path: path, password: "new password", options: options)
      #expect(reopened.keyDerivation == derivation)
      #expect(try reopened.get("k") == Data("v".utf8))
      try reopened.close()
    }
  }
}

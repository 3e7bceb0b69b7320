import CaskEngine
import CaskTestSupport
import Foundation

extension FuzzStore {
  /// Reads everything an open `store` claims to hold: `keys()` against `stats()` and `count`,
  /// every key's value, `verify()`, and unless `readOnly` a write read back. Only `CaskError`
  /// may come out of any of it; a crash, a trap or another error is a defect.
  ///
  /// - Returns: the keys listed, how many of them read a value, and whether `verify()` found
  ///   nothing wrong; `nil` when a listing, `verify()` or the write threw (a `CaskError`:
  ///   damage the store reports).
  package static func readAll(_ store: CaskStore, readOnly: Bool) -> (
    keys: [String], readable: Int, verified: Bool
  )? {
    do {
      let keys = try store.keys()
      let stats = store.stats()
      FuzzReplay.check(keys.count == stats.keys, "keys() lists \(keys.count) keys, stats say \(stats.keys)")
      // `count` leaves out the groups reserved for the layers above (first byte U+0001).
      let reserved = keys.filter { key in
        key.utf8.first == CaskFormat.reservedGroupByte && key.utf8.contains(CaskFormat.keyGroupSeparator)
      }
      FuzzReplay.check(
        keys.count - reserved.count == store.count,
        "keys() lists \(keys.count) keys, \(reserved.count) in reserved groups, count says \(store.count)")
      var readable = 0
      for key in keys {
        do {
          if try store.get(key) != nil { readable += 1 }
        } catch {
          FuzzReplay.check(error is CaskError, "get threw a non-CaskError: \(type(of: error))")
        }
      }
      let verified = try store.verify().isClean
      if !readOnly {
        // A recovered store takes writes and reads them back.
        try store.put(afterValue, forKey: afterKey)
        FuzzReplay.check(try store.get(afterKey) == afterValue, "a write after recovery reads back")
      }
      return (keys, readable, verified)
    } catch {
      FuzzReplay.check(error is CaskError, "a read threw a non-CaskError: \(type(of: error))")
      return nil
    }
  }

  /// The key and value of the write `readAll` makes.
  package static let afterKey = "fuzz:after"
  package static let afterValue = Data("after".utf8)

  /// As `openAndReadAll`, with a checkpoint written at close whatever the store's size; then,
  /// when the store took its write and closed, opens it again read-only: it must open, list
  /// exactly the keys it listed before and the write (unless bytes under a MAC were changed and
  /// `verify()` reported the damage), and read the write back. Prevents: a
  /// close (its hints, manifest, checkpoint) that leaves files the next open refuses or reads
  /// to other contents.
  ///
  /// When `authentic` (every byte under a MAC is as the engine sealed it: only what a holder
  /// of the files without the key can change was changed), an open that reports no damage
  /// and a `verify()` that finds none must leave every listed key readable: damage that
  /// reads meet is reported by open or `verify()`, never left for a read to find
  /// (Docs/SECURITY.md).
  ///
  /// With `plantedBug`, open trusts any authentic checkpoint without matching it against the
  /// log (`FuzzingEntry.plantCheckpointTrustedBlindly`): the bug the target is shown to catch.
  package static func openReadAllAndReopen(
    _ fileSystem: FaultyFileSystem, readOnly: Bool, authentic: Bool, plantedBug: Bool = false
  ) {
    var options = options(fileSystem, readOnly: readOnly)
    options.checkpoints = CaskStore.Checkpoints(interval: 1 << 40, minimumKeys: 1)
    if plantedBug { FuzzingEntry.plantCheckpointTrustedBlindly(in: &options) }
    let store: CaskStore
    do {
      store = try CaskStore(path: path, keys: userKeys, options: options)
    } catch {
      FuzzReplay.check(error is CaskError, "open threw a non-CaskError: \(type(of: error))")
      return
    }
    guard let (listed, readable, verified) = readAll(store, readOnly: readOnly) else {
      try? store.close()
      return
    }
    let recovery = store.stats().recovery
    if authentic && verified && recovery.corruptRegions.isEmpty && recovery.unreadableSegments.isEmpty
      && recovery.integrityViolations.isEmpty
    {
      FuzzReplay.check(
        readable == listed.count,
        "open and verify() report nothing wrong, yet \(listed.count - readable) of \(listed.count) keys do not read")
    }
    guard !readOnly else {
      try? store.close()
      return
    }
    do {
      try store.close()
    } catch {
      FuzzReplay.check(error is CaskError, "close threw a non-CaskError: \(type(of: error))")
      return
    }
    options.readOnly = true
    let reopened: CaskStore
    do {
      reopened = try CaskStore(path: path, keys: userKeys, options: options)
    } catch CaskError.integrityViolation(let file, let reason) where !authentic && !verified {
      // Bytes under a MAC were changed, and `verify()` reported the damage that an open from
      // a checkpoint did not read: a forged record in a covered segment. When the close could
      // not write a checkpoint (the old one's pages lie, and fail as the writer reads them),
      // the reopen reads that segment from the log, finds the forged record and refuses, as
      // any open of those files without a checkpoint does. The write must still be there.
      reopenAllowingViolations(options, file: file, reason: reason)
      return
    } catch {
      FuzzReplay.check(false, "a store that took a write and closed does not open again: \(error)")
      return
    }
    defer { try? reopened.close() }
    // Bytes under a MAC were changed and `verify()` reported damage: the store said its files
    // are damaged, and what a checkpoint described of the damaged records may give way at the
    // reopen to what the log itself holds (a close may leave no checkpoint, and the log is
    // then read). The reopen must still open and read the write back; an authentic store
    // (files rolled back, mixed or planted whole, as `plantedBug` makes) keeps its listing.
    guard authentic || verified else {
      FuzzReplay.check(
        (try? reopened.get(afterKey)) == afterValue, "reopened, the write before close reads back")
      return
    }
    do {
      // As lists, not sets: the close and the reopen keep exactly what was listed, a key the
      // store listed twice (an authentic checkpoint can hold a slot no probe reaches: one
      // long key in `Checkpoint.hashCheckInterval` is hashed again, a probe path is checked
      // within a page) included.
      let keys = try reopened.keys().sorted()
      let expected = (listed.filter { $0 != afterKey } + [afterKey]).sorted()
      FuzzReplay.check(
        keys == expected,
        "reopened, the store lists \(keys.count) keys, \(keys.filter { !expected.contains($0) }.count) of them new, "
          + "where it listed \(expected.count) before its close")
      FuzzReplay.check(try reopened.get(afterKey) == afterValue, "reopened, the write before close reads back")
    } catch {
      FuzzReplay.check(false, "reopened, a read threw: \(error)")
    }
  }

  /// Reopens, read-only and allowing integrity violations, a store whose reopen refused with
  /// the violation in `file`: it must open, report that violation, and read the write back.
  private static func reopenAllowingViolations(_ options: CaskStore.Options, file: String, reason: String) {
    var allowing = options
    allowing.allowIntegrityViolations = true
    do {
      let reopened = try CaskStore(path: path, keys: userKeys, options: allowing)
      defer { try? reopened.close() }
      FuzzReplay.check(
        reopened.stats().recovery.integrityViolations.contains { $0.file == file },
        "reopened allowing integrity violations, the store does not report the one it refused for (\(reason))")
      FuzzReplay.check(
        (try? reopened.get(afterKey)) == afterValue, "reopened allowing integrity violations, the write reads back")
    } catch {
      FuzzReplay.check(false, "a store that took a write and closed does not open again allowing violations: \(error)")
    }
  }
}

import Foundation
import RNCryptorCodec

#if canImport(Glibc)
  import Glibc
#endif

/// What `CaskStore.rekeyedCopy(to:password:)` wrote.
public struct CaskRekeyReport: Sendable, Equatable {
  /// Keys copied, each with its value.
  public var keys: Int
  /// Bytes of the values copied (before encryption).
  public var valueBytes: UInt64
}

extension CaskStore {
  /// Writes every key and value into a new store at `destination` that has a **new data key**,
  /// wrapped under `password`: every record is decrypted and encrypted again, so nothing in
  /// the copy can be read with this store's data key, its old headers or its old passwords.
  /// This is the remedy after a compromise that a password change is not (Docs/SECURITY.md,
  /// section 4): once the copy is made, replace the store with it and destroy the store and
  /// its backups.
  ///
  /// The copy is one moment of the store: writers wait until it is done (readers do not). It
  /// is built in a hidden directory beside `destination` and renamed to it when complete and
  /// synced, so `destination` is either missing or the whole copy, even after a crash; a crash
  /// can leave the hidden `.NAME.rekey-…` directory behind, which is safe to delete.
  ///
  /// - Parameters:
  ///   - destination: a path that does not exist yet (its missing parents are made).
  ///   - shouldContinue: asked before each key is copied and before the copy is renamed to
  ///     `destination`; when it returns `false` the copy stops, the hidden directory (and the
  ///     parents this call made) are removed and the call throws `CancellationError`. Once it
  ///     has returned `true` for the rename, the copy completes. For a `Ctrl-C` handler or a
  ///     task's cancellation (`CipherCask` has an `async` form that passes the task's). It
  ///     runs with the writer held: it must not write to this store.
  /// - Throws: `CancellationError` when `shouldContinue` stopped the copy; `CaskError.io`
  ///   (`EEXIST` when `destination` exists, also when it appeared while the copy was built, or something is at the hidden directory's name; `ENOSPC`, `EIO`),
  ///   `.invalidKey` for an empty password, `.corrupt` for a record that does not
  ///   authenticate (nothing is left behind then: run `verify()`), `.closed`,
  ///   `.reentrantCall` inside a transaction or observer.
  /// - Complexity: O(size of the live data): one decryption and one encryption per record,
  ///   two PBKDF2 runs for the new password.
  @discardableResult
  public func rekeyedCopy(
    to destination: String, password: String, shouldContinue: () -> Bool = { true }
  ) throws -> CaskRekeyReport {
    guard !password.isEmpty else { throw CaskError.invalidKey(reason: "the password is empty") }
    return try rekeyedCopy(
      to: destination, credential: .password(SecureBytes(utf8: password)), shouldContinue: shouldContinue)
  }

  /// `rekeyedCopy(to:password:shouldContinue:)` for a copy opened with raw keys instead of a
  /// password.
  @discardableResult
  public func rekeyedCopy(
    to destination: String, keys: RNCryptor.Keys, shouldContinue: () -> Bool = { true }
  ) throws -> CaskRekeyReport {
    try rekeyedCopy(to: destination, credential: .keys(keys), shouldContinue: shouldContinue)
  }

  private func rekeyedCopy(
    to destination: String, credential: StoreCredential, shouldContinue: () -> Bool
  ) throws -> CaskRekeyReport {
    try userCode.refuse("rekeyedCopy")
    try checkCopyDestination(destination, operation: "rekeyed copy")
    guard fileSystem.fileKind(destination) == .missing else {
      throw CaskError.io(operation: "rekeyed copy", path: destination, errno: EEXIST)
    }
    let parent = StoreOpener.parentDirectory(of: destination)
    let hidden = StoreOpener.hiddenSibling(of: destination, purpose: "rekey")
    // Made by this call, deepest first: the hidden directory (first) and missing parents.
    var created: [String] = []
    var copy: CaskStore?
    do {
      if fileSystem.fileKind(parent) == .missing {
        try StoreOpener.createDirectoryDurably(parent, fileSystem: fileSystem, created: &created)
      }
      // Exclusively: a directory or a link already at that name (left by a crash, or planted by
      // someone who can write `parent`, to have the copy built where they read it, or to have
      // their files removed below) is neither built in nor emptied.
      try fileSystem.createDirectoryExclusively(hidden)
      created.insert(hidden, at: 0)
      try fileSystem.syncDirectory(parent)
      let options = Options(
        durability: .never, segmentSizeLimit: self.options.segmentSizeLimit, autoCompaction: nil,
        fileSystem: fileSystem)
      let target = try CaskStore(path: hidden, credential: credential, options: options)
      copy = target
      let report = try writer.withLock { writer -> CaskRekeyReport in
        try writer.throwIfClosed()
        return try copyRecords(into: target, shouldContinue: shouldContinue)
      }
      try target.close()
      copy = nil
      guard shouldContinue() else { throw CancellationError() }
      // Never over something made at `destination` while the copy was built: a plain rename
      // would replace an empty directory without a word.
      do {
        try fileSystem.renameNoReplace(hidden, to: destination)
      } catch CaskError.io(_, _, EEXIST) {
        throw CaskError.io(operation: "rekeyed copy", path: destination, errno: EEXIST)
      }
      try fileSystem.syncDirectory(parent)
      return report
    } catch {
      try? copy?.close()
      if created.first == hidden { StoreOpener.removeFiles(in: hidden, fileSystem: fileSystem) }
      for directory in created { try? fileSystem.removeDirectory(directory) }
      throw error
    }
  }

  /// Copies every key and value into `target`, in batches of about 8 MiB, asking
  /// `shouldContinue` before each key. Called with the writer held, so the keys and values
  /// are those of one moment. In a random order: records written in key order would give the
  /// order of the keys (where each collection starts, the order of ids) to anyone who reads
  /// the copy's record sizes and sequence numbers.
  func copyRecords(into target: CaskStore, shouldContinue: () -> Bool) throws -> CaskRekeyReport {
    var report = CaskRekeyReport(keys: 0, valueBytes: 0)
    var batch = CaskBatch()
    var attachments: [String: [String]] = [:]
    var batchBytes = 0
    // An attached key goes into the copy attached to its owner's record again, not as a
    // record of its own (Docs/FORMAT.md, "Version 5: attached keys").
    let attached = state.withLock { $0.directory.attachedKeysByOwner() }
    for key in try keys().shuffled() {
      guard shouldContinue() else { throw CancellationError() }
      if attached.keys.contains(key) { continue }
      guard let value = try get(key) else { continue }
      try batch.put(value, forKey: key)
      if let keys = attached.byOwner[key] {
        attachments[key] = keys
        report.keys += keys.count
      }
      batchBytes += value.count + key.utf8.count
      report.keys += 1
      report.valueBytes += UInt64(value.count)
      if batchBytes >= 8 << 20 {
        _ = try target.commit(batch, attaching: attachments)
        batch = CaskBatch()
        attachments = [:]
        batchBytes = 0
      }
    }
    _ = try target.commit(batch, attaching: attachments)
    try target.sync()
    return report
  }
}

import Foundation
import RNCryptorCodec

#if canImport(Glibc)
  import Glibc
#endif

/// What `CaskStore.upgrade(at:password:)` did.
public struct CaskUpgradeReport: Sendable, Equatable {
  /// The format version the store had.
  public var previousVersion: UInt16
  /// The format version it has now: `CaskFormat.formatVersion`.
  public var version: UInt16
  /// Whether the store was rewritten; `false` when it already had the current version.
  public var upgraded: Bool
  /// Keys copied, each with its value (0 when nothing was rewritten).
  public var keys: Int
  /// Bytes of the values copied, before encryption.
  public var valueBytes: UInt64
  /// Hidden directories left beside the store by upgrades that were cut off, removed by this
  /// one (each held an old or an unfinished copy, never the only one).
  public var removedLeftovers: [String]
}

extension CaskStore {
  /// Rewrites a format version 2, 3 or 4 store as a version 5 store (records bound to their
  /// place, a manifest, an authenticated header, chained segments) in place, crash-safely; a
  /// store that has version 5 already is left as it is.
  ///
  /// The current data key and the header's way of deriving keys stay: the key is wrapped
  /// again (with the version bound into it) under the same password or keys, with a new
  /// salt, so the same password opens the store, and `changePassword` afterwards moves an
  /// RNCryptor-wrapped header to scrypt. The copy gets a store identity of its own. Every
  /// record is decrypted and sealed again under that data key, in a random order, so the
  /// older key epochs of a version 4 store are gone from the copy.
  ///
  /// The steps, each leaving a store at `path` that opens with all of its data:
  /// 1. open the store read-only (a shared lock: no writer can change it) and copy every key
  ///    and value into a new version 3 store in the hidden directory `.NAME.upgrade-…` beside
  ///    it, closed and synced;
  /// 2. take the store's lock exclusively and check that its files (names, sizes, header)
  ///    are those that were copied;
  /// 3. swap the two directories in one step (`renameat2(RENAME_EXCHANGE)`) and sync the
  ///    parent: before the swap `path` is the old store, after it the new one;
  /// 4. release the lock and remove the old store, now under the hidden name.
  ///
  /// A crash leaves the old store or the new one at `path`, and possibly a hidden directory,
  /// which the next `upgrade` of the store removes (`removedLeftovers`).
  ///
  /// - Parameters:
  ///   - path: the store's directory; it must not be open, in this process or another.
  ///   - password: the store's password.
  ///   - options: `fileSystem` and `segmentSizeLimit` are used; the rest is set by the upgrade.
  ///   - shouldContinue: asked before each key is copied and before the swap; `false` stops
  ///     the upgrade, removes the copy and throws `CancellationError`.
  /// - Throws: `CaskError.locked` when the store is open elsewhere (or changed while it was
  ///   copied), `.alreadyOpen` when this process has it open, `.wrongPassword`,
  ///   `.notACaskStore`, `.storeNotFound`, `.corrupt` for a record that does not authenticate (nothing is left
  ///   behind then: run `verify()`), `.io` (`ENOSYS` or `EINVAL` where the file system cannot
  ///   swap two directories; the store is then as it was), `CancellationError`.
  /// - Complexity: O(size of the live data): one decryption and one encryption per record,
  ///   one key derivation for the password.
  @discardableResult
  public static func upgrade(
    at path: String, password: String, options: Options = Options(), shouldContinue: () -> Bool = { true }
  ) throws -> CaskUpgradeReport {
    guard !password.isEmpty else { throw CaskError.invalidKey(reason: "the password is empty") }
    return try upgrade(
      at: path, credential: .password(SecureBytes(utf8: password)), options: options, shouldContinue: shouldContinue)
  }

  /// `upgrade(at:password:options:shouldContinue:)` for a store opened with raw keys.
  @discardableResult
  public static func upgrade(
    at path: String, keys: RNCryptor.Keys, options: Options = Options(), shouldContinue: () -> Bool = { true }
  ) throws -> CaskUpgradeReport {
    try upgrade(at: path, credential: .keys(keys), options: options, shouldContinue: shouldContinue)
  }

  private static func upgrade(
    at path: String, credential: StoreCredential, options: Options, shouldContinue: () -> Bool
  ) throws -> CaskUpgradeReport {
    let fileSystem = options.fileSystem
    let store = try openSource(at: path, credential: credential, options: options)
    let previousVersion = store.keyRing.withLock { $0.headerVersion }
    var report = CaskUpgradeReport(
      previousVersion: previousVersion, version: previousVersion, upgraded: false, keys: 0, valueBytes: 0,
      removedLeftovers: [])
    guard previousVersion < CaskFormat.formatVersion else {
      try store.close()
      let lock = try fileSystem.lock("\(path)/\(CaskFormat.lockFileName)", exclusive: true)
      defer { lock.unlock() }
      report.removedLeftovers = removeLeftovers(of: path, fileSystem: fileSystem)
      return report
    }
    let hidden = StoreOpener.hiddenSibling(of: path, purpose: "upgrade")
    let (copy, copied) = try copyToHidden(
      store, from: path, to: hidden, credential: credential, options: options, shouldContinue: shouldContinue)
    report.keys = copy.keys
    report.valueBytes = copy.valueBytes
    let lock = try swapIn(hidden, at: path, expecting: copied, fileSystem: fileSystem)
    // From here the store at `path` is the new one, whatever fails: the parent's sync makes
    // the swap durable; the old store under the hidden name is removed by this call or the
    // next upgrade.
    defer { lock.unlock() }
    let parent = StoreOpener.parentDirectory(of: path)
    try fileSystem.syncDirectory(parent)
    report.version = CaskFormat.formatVersion
    report.upgraded = true
    removeDirectory(hidden, fileSystem: fileSystem)
    report.removedLeftovers = removeLeftovers(of: path, fileSystem: fileSystem)
    try? fileSystem.syncDirectory(parent)
    return report
  }

  /// Step 1's open: the store read-only (a shared lock, so no writer changes it while it is
  /// copied), never synced, compacted or created.
  private static func openSource(
    at path: String, credential: StoreCredential, options: Options
  ) throws -> CaskStore {
    var readOptions = Options(
      durability: .never, segmentSizeLimit: options.segmentSizeLimit, autoCompaction: nil, createIfMissing: false,
      readOnly: true, fileSystem: options.fileSystem)
    readOptions.keyDerivation = options.keyDerivation
    return try CaskStore(path: path, credential: credential, options: readOptions)
  }

  /// Step 1: copies every live key of `store`, open at `path`, into a new store at `hidden`, closes both and
  /// returns what was copied with the state of the source's files it was copied from. On any
  /// failure `store` is closed and `hidden` removed before the error is thrown.
  private static func copyToHidden(
    _ store: CaskStore, from path: String, to hidden: String, credential: StoreCredential, options: Options,
    shouldContinue: () -> Bool
  ) throws -> (CaskRekeyReport, FileSystemState) {
    let fileSystem = options.fileSystem
    var hiddenMade = false
    do {
      // The old store goes once the copy is swapped in: only a store that opened without
      // damage, whose every live key the copy holds, is upgraded. Prevents: a store whose
      // segments open could not read (a header changed back to version 2) upgraded to an
      // empty one, and its segments deleted.
      try refuseDamagedSource(store)
      let live = store.stats().keys
      let copied = try FileSystemState(of: path, fileSystem: fileSystem)
      try fileSystem.createDirectoryExclusively(hidden)
      hiddenMade = true
      try fileSystem.syncDirectory(StoreOpener.parentDirectory(of: path))
      let copy = try store.copyIntoUpgrade(
        at: hidden, credential: credential, keyDerivation: store.keyDerivation ?? options.keyDerivation,
        shouldContinue: shouldContinue)
      guard copy.keys == live else {
        throw CaskError.corrupt(
          file: CaskFormat.headerFileName, offset: 0,
          reason: "the upgrade copied \(copy.keys) of \(live) live keys; the store was left as it was")
      }
      try store.close()
      guard shouldContinue() else { throw CancellationError() }
      return (copy, copied)
    } catch {
      try? store.close()
      if hiddenMade { removeDirectory(hidden, fileSystem: fileSystem) }
      throw error
    }
  }

  /// Steps 2 and 3: takes the store's lock exclusively, checks its files are still `copied`
  /// and swaps `hidden` with `path`, returning the lock held. On any failure the lock is
  /// released and `hidden` removed, the store at `path` as it was.
  private static func swapIn(
    _ hidden: String, at path: String, expecting copied: FileSystemState, fileSystem: any FileSystem
  ) throws -> any FileLock {
    let lock: any FileLock
    do {
      lock = try fileSystem.lock("\(path)/\(CaskFormat.lockFileName)", exclusive: true)
    } catch {
      removeDirectory(hidden, fileSystem: fileSystem)
      throw error
    }
    do {
      // Prevents: swapping in a copy of an older state when a writer opened the store between
      // the read-only close and this lock, and appended, compacted or changed the password.
      guard try FileSystemState(of: path, fileSystem: fileSystem) == copied else {
        throw CaskError.locked(path: path)
      }
      try fileSystem.exchange(hidden, path)
      return lock
    } catch {
      lock.unlock()
      removeDirectory(hidden, fileSystem: fileSystem)
      throw error
    }
  }

  /// Writes the new store: a version 5 header wrapping this store's current data key under
  /// `credential`, then every key and value, under the writer (readers go on). The copy is
  /// closed (and so synced) on return.
  ///
  /// - Complexity: one key derivation for a password (the version is bound into the wrapped
  ///   key, so the old wrapping cannot be kept), then O(size of the live data).
  private func copyIntoUpgrade(
    at hidden: String, credential: StoreCredential, keyDerivation: KeyDerivation, shouldContinue: () -> Bool
  ) throws -> CaskRekeyReport {
    let cipher = self.cipher
    var ring = KeyRing(current: RecordCipher(keys: cipher.keys, version: cipher.version, epoch: cipher.epoch))
    ring.hasEpochs = true
    ring.identity = try StoreIdentity.random()
    var header = try credential.wrap(
      StoreCredential.concatenate(cipher.keys), version: CaskFormat.formatVersion, keyDerivation: keyDerivation)
    header.keyRing = try ring.sealed()
    header.identity = ring.identity
    header = try header.authenticated(with: cipher.keys)
    try StoreOpener.writeHeader(
      header, at: "\(hidden)/\(CaskFormat.headerFileName)", fileSystem: fileSystem, directory: hidden)
    let target = try CaskStore(
      path: hidden, credential: .unwrapped(cipher.keys),
      options: Options(
        durability: .never, segmentSizeLimit: options.segmentSizeLimit, autoCompaction: nil, createIfMissing: false,
        fileSystem: fileSystem))
    do {
      let report = try writer.withLock { writer -> CaskRekeyReport in
        try writer.throwIfClosed()
        return try copyRecords(into: target, shouldContinue: shouldContinue)
      }
      try target.close()
      return report
    } catch {
      try? target.close()
      throw error
    }
  }

  /// Throws unless `store` opened without damage: an unreadable segment, a damaged region
  /// or an integrity violation (a store opened for salvage) means some records were not
  /// read, and a copy of the rest must not replace it.
  ///
  /// - Throws: `CaskError.corrupt` naming the first problem.
  private static func refuseDamagedSource(_ store: CaskStore) throws {
    let recovery = store.stats().recovery
    let problem =
      recovery.unreadableSegments.first.map { ($0, "segment cannot be read") }
      ?? (recovery.integrityViolations + recovery.corruptRegions).first.map { ($0.file, $0.reason) }
    guard let (file, reason) = problem else { return }
    throw CaskError.corrupt(
      file: file, offset: 0,
      reason: "\(reason); the upgrade would not copy all of the store, so it was left as it was")
  }

  /// Removes the hidden directories of earlier upgrades of `path`, returning their paths.
  /// Called only with the store's lock held exclusively, so none belongs to an upgrade still
  /// copying.
  private static func removeLeftovers(of path: String, fileSystem: any FileSystem) -> [String] {
    let prefix = StoreOpener.hiddenSiblingPrefix(of: path, purpose: "upgrade")
    let parent = StoreOpener.parentDirectory(of: path)
    var removed: [String] = []
    for name in (try? fileSystem.contentsOfDirectory(parent)) ?? [] {
      let candidate = "\(parent)/\(name)"
      guard candidate.hasPrefix(prefix), fileSystem.fileKind(candidate) == .directory else { continue }
      removeDirectory(candidate, fileSystem: fileSystem)
      if fileSystem.fileKind(candidate) == .missing { removed.append(candidate) }
    }
    return removed
  }

  /// Removes a store directory made or left by an upgrade, ignoring failures.
  private static func removeDirectory(_ directory: String, fileSystem: any FileSystem) {
    StoreOpener.removeFiles(in: directory, fileSystem: fileSystem)
    try? fileSystem.removeDirectory(directory)
  }

  /// The whole header file at `path` (`StorageFile.readWhole`'s checks: no longer than
  /// `CaskFormat.maximumHeaderFileLength`, no hole).
  static func contents(of path: String, fileSystem: any FileSystem) throws -> Data {
    let file = try fileSystem.open(path, mode: .readOnly)
    defer { file.close() }
    return try file.readWhole(limit: CaskFormat.maximumHeaderFileLength)
  }
}

/// The files of a store directory as far as an upgrade compares them: every name with its
/// size, and the header's bytes (a password change keeps its size).
struct FileSystemState: Equatable {
  var sizes: [String: UInt64]
  var header: Data

  init(of directory: String, fileSystem: any FileSystem) throws {
    sizes = [:]
    for name in try fileSystem.contentsOfDirectory(directory) where name != CaskFormat.lockFileName {
      let path = "\(directory)/\(name)"
      guard fileSystem.fileKind(path) == .file else { continue }
      let file = try fileSystem.open(path, mode: .readOnly)
      defer { file.close() }
      sizes[name] = try file.size()
    }
    header = try CaskStore.contents(of: "\(directory)/\(CaskFormat.headerFileName)", fileSystem: fileSystem)
  }
}

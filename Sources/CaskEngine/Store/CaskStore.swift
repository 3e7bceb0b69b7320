import Foundation
import RNCryptorCodec
import Synchronization

/// An encrypted key-value store in a directory: an append-only log of RNCryptor v3 messages,
/// an in-memory hash index and online compaction (Docs/ARCHITECTURE.md).
///
/// `CaskStore` is `Sendable`: any number of threads may read at once; writes are serialized;
/// compaction runs beside both. Keys and values are encrypted with a random data key that is
/// stored wrapped under the password (or keys) the store was opened with.
public final class CaskStore: Sendable {
  // MARK: State, by who guards it
  //
  // Lock order (Docs/ARCHITECTURE.md, section 9, rule 1). A thread that holds a lock takes
  // only locks below it in this list, never one above; no lock is held while a thread waits
  // in group commit.
  //
  //   1. `closeSection`    one `close()` at a time; the whole close runs inside it.
  //   2. `compactionLock`  a compaction, or a backup's choice of files.
  //   3. `writer`          the append side (`WriterState`).
  //   4. the commit hook's own locks (the collections' `IndexRuntime.state`), taken under
  //      `writer` by the hook, which reads `state` inside them.
  //   5. `state`           the index and the open segments (`IndexState`).
  //   6. leaves, taken under any of the above, with nothing taken inside them: `keyRing`,
  //      `headerKeyDerivation`, `backgroundFailure`, `checkpointPending`, `closing`,
  //      `fileLock` (whose release takes `PosixLock.held`), `groupCommit`'s condition and its
  //      sync lock (under `writer` by a seal; never one inside the other), `background`'s
  //      state (under `state` by `stats()`; inside `background`'s own wake-up condition),
  //      `observers`' table, `extensions`' hook, keeper, slots and `ChangeTracker`'s set,
  //      `recordCache`'s table, and the index's `LazyPages` locks (a page of a table loaded
  //      from a checkpoint, under `state` or on `hintQueue`; inside them only the checkpoint
  //      file's failure record).
  //
  // `writer` is held while `hintQueue` drains (close, backup, a closing checkpoint): its jobs
  // take only `backgroundFailure`, `checkpointPending` and the `LazyPages` locks of the
  // tables a checkpoint encodes, never the writer.

  // Constant after open: read without a lock.

  /// The store's directory.
  public let path: String
  /// The options it was opened with.
  public let options: Options
  let fileSystem: any FileSystem

  // Guarded by `writer`: the append side, one writer at a time (`WriterState`). The key ring
  // and the header's key derivation change only with `writer` held (a password change, the
  // end of a rotation); their own leaf locks let a reader copy them without the writer.

  let writer: Locked<WriterState>
  /// The data keys of every key epoch the store still uses (Crypto/KeyRing.swift).
  let keyRing: Locked<KeyRing>
  /// The keys of the current epoch: what new records, hints, the manifest and tokens are
  /// sealed under. A segment's records are read with its own (`Segment.cipher`).
  var cipher: RecordCipher { keyRing.withLock { $0.current } }
  /// How the header derives the password's keys (`keyDerivation`); changed by a password change.
  let headerKeyDerivation: Locked<KeyDerivation?>

  // Guarded by `state`: the index and the open segments (`IndexState`), held briefly by
  // every reader and by every commit's index update.

  let state: Locked<IndexState>

  // Synchronised by itself: locks of their own, atomics, or queues.

  /// Held for the whole of a compaction, and by a backup while it chooses its files.
  let compactionLock = CriticalSection()
  /// One `close()` at a time: a second waits for the first to finish.
  let closeSection = CriticalSection()
  /// The thread running `close()` (whose `onClose` callbacks may call it again), and the error
  /// a failed close threw, for the closes after it.
  let closing = Locked<(thread: pthread_t?, failure: (any Error)?)>((nil, nil))
  /// The `flock` on `LOCK`, released by `close()`.
  let fileLock: Locked<(any FileLock)?>
  /// The last failure of a write made beside the writes it follows, which cost nothing written
  /// and is kept rather than thrown (`backgroundWriteFailure`): a hint, a manifest, a header
  /// or a checkpoint.
  let backgroundFailure = Locked<CaskError?>(nil)
  /// Whether a checkpoint taken is still waiting on `hintQueue`: another is not taken then.
  let checkpointPending = Locked(false)
  /// Shares syncs among writers; every sync of the active segment (a group's, a seal's,
  /// close's) goes through it, one at a time.
  let groupCommit = GroupCommit()
  /// Writes the hints of segments that filled up, and checkpoints, off the writer's thread.
  let hintQueue = HintQueue()
  /// The periodic syncer and automatic compaction.
  let background: BackgroundWork
  let observers = ChangeObservers()
  /// The commit hook and per-store state of the layers above (CaskStore+CommitHook.swift).
  package let extensions = StoreExtensions()
  /// Set while a transaction body or an observer runs with the writer held.
  let userCode = UserCodeMark()
  /// Recently read records, sealed (`Options.recordCacheBytes`); `nil` when turned off.
  let recordCache: RecordCache?

  /// The index and the open segments, guarded by `state`. Readers hold the lock only to look
  /// up a location and take a reference to its segment.
  struct IndexState: Sendable {
    var directory = KeyDirectory()
    var segments: [UInt32: Segment] = [:]
    var recovery = RecoveryReport()
    var compactions = 0
    var closed = false

    /// Throws `CaskError.closed` once `close()` has released the index, and the index's
    /// damage (`throwIfDamaged`).
    func throwIfClosed() throws {
      if closed { throw CaskError.closed }
      try throwIfDamaged()
    }

    /// Throws `CaskError.corrupt` naming the checkpoint once a page of it failed its checks
    /// when the index first touched it (`KeyDirectory.damage`): from then on a lookup may
    /// have missed a key, so nothing is answered from the index. Called after a lookup too,
    /// since the lookup may have been the first touch.
    func throwIfDamaged() throws {
      if let damage = directory.damage { throw damage }
    }
  }

  /// The append side, guarded by `writer`: one writer at a time.
  struct WriterState: Sendable {
    var active: ActiveSegment?
    var nextSequence: UInt64 = 1
    var nextSegmentID: UInt32 = 1
    /// The file whose number (or order base) is the highest in the store: the one to name when
    /// no number is left above it.
    var highestNumberHolder: String?
    /// Incremented by every write; `GroupCommit` makes tickets durable.
    var ticket: UInt64 = 0
    /// Set after a failed sync: the state of the disk is unknown, so writes stop until reopen.
    var failure: CaskError?
    var closed = false
    /// The generation of the last manifest written or read (version 3).
    var manifestGeneration: UInt64 = 0
    /// The header as this store last read or wrote it: a rotation's end rewrites its key ring.
    var header: StoreHeader?
    /// Compaction outputs being written, which the manifest names as pending, with the key
    /// epoch each is sealed under.
    var pendingOutputs: [UInt32: UInt32] = [:]
    /// Compaction inputs a manifest has retired and that are still on disk: every manifest
    /// names them as retired until they are gone. Prevents: a seal's manifest, written while
    /// a compaction removes its inputs, listing them as live segments, so that a crash right
    /// after their removal left a manifest listing missing segments and open refused the store.
    var retiredSegments: Set<UInt32> = []
    /// Set by an open that wrote nothing (the store was as a clean close left it); cleared by
    /// every append and every manifest written since. A close while it is set writes nothing.
    var untouchedSinceOpen = false
    /// Bytes appended since the last checkpoint was taken (`Options.Checkpoints.interval`).
    var checkpointDebt: UInt64 = 0
    /// Keys the last checkpoint taken held (0 before the first, and once it is removed):
    /// the next waits for `Options.Checkpoints.spacing` times their slots of log.
    var checkpointedKeys = 0
    /// Version 5: the newest ordinary segment, which the next segment started links to
    /// (`SegmentLink`): the one sealed last, or the newest open found. Kept while compaction
    /// removes it: the link names it as it was, and the manifest then lists nothing newer.
    var chainTip: Segment?

    /// Throws `CaskError.closed` once `close()` has begun: every writer's first check.
    func throwIfClosed() throws {
      if closed { throw CaskError.closed }
    }

    /// Throws the failure of an earlier sync (or cleanup): after it the state of the disk is
    /// unknown, so nothing more is written until the store is reopened.
    func throwIfFailed() throws {
      if let failure { throw failure }
    }
  }

  // MARK: Opening

  /// Opens (or creates) the store at `path` with a password.
  ///
  /// - Parameters:
  ///   - path: the store's directory, for example `users.cask`.
  ///   - password: unlocks the data key; never stored.
  ///   - options: durability, segment size, compaction, read-only.
  /// - Throws: `CaskError.wrongPassword` (nothing is written), `.locked` (another process has it open), `.alreadyOpen` (this one has), `.notACaskStore`,
  ///   `.storeNotFound` (nothing at `path`, and the options do not let it be created), `.unsupportedVersion`, `.corrupt` for a damaged header, `.io`.
  /// - Complexity: the header's key derivation (one scrypt run, or two PBKDF2 runs for a
  ///   `.rncryptor` header), plus reading every hint file (or, for segments without a valid
  ///   hint, every record's key).
  public convenience init(path: String, password: String, options: Options = Options()) throws {
    guard !password.isEmpty else { throw CaskError.invalidKey(reason: "the password is empty") }
    try self.init(path: path, credential: .password(SecureBytes(utf8: password)), options: options)
  }

  /// Opens (or creates) the store at `path` with raw keys instead of a password: no PBKDF2.
  ///
  /// - Throws: as `init(path:password:options:)`; `.wrongCredentialType` if the store was
  ///   created with a password.
  public convenience init(path: String, keys: RNCryptor.Keys, options: Options = Options()) throws {
    try self.init(path: path, credential: .keys(keys), options: options)
  }

  init(path: String, credential: StoreCredential, options: Options) throws {
    var options = options
    // A store with integrity violations is opened for salvage only.
    if options.allowIntegrityViolations { options.readOnly = true }
    self.path = path
    self.options = options
    self.fileSystem = options.fileSystem
    let opened = try StoreOpener(path: path, credential: credential, options: options).open()
    self.keyRing = Locked(opened.keyRing)
    self.recordCache = options.recordCacheBytes > 0 ? RecordCache(capacity: options.recordCacheBytes) : nil
    self.headerKeyDerivation = Locked(opened.keyDerivation)
    self.fileLock = Locked(opened.lock)
    self.state = Locked(opened.indexState)
    self.writer = Locked(opened.writerState)
    self.background = BackgroundWork()
    groupCommit.markDurable(0)
    background.start(store: self)
  }

  deinit {
    try? close()
  }

  // MARK: Validation

  static func validate(key: String) throws {
    let length = key.utf8.count
    guard length > 0 else { throw CaskError.invalidKey(reason: "keys must not be empty") }
    guard length <= CaskFormat.maximumKeyLength else {
      throw CaskError.invalidKey(reason: "key of \(length) UTF-8 bytes exceeds \(CaskFormat.maximumKeyLength)")
    }
  }

  static func validate(value: Data) throws {
    guard value.count <= CaskFormat.maximumValueLength else {
      throw CaskError.valueTooLarge(length: value.count, maximum: CaskFormat.maximumValueLength)
    }
  }

  // MARK: Reading

  /// The value stored under `key`, or `nil`.
  ///
  /// - Throws: `CaskError.corrupt` if the record does not authenticate (it is never returned
  ///   as data), `.io`, `.closed`.
  /// - Complexity: one hash lookup, one positioned read, one decryption: O(1) in the number of keys.
  public func get(_ key: String) throws -> Data? {
    guard let (location, segment) = try locate(key) else { return nil }
    return try readValue(at: location, in: segment, key: key)
  }

  /// Whether `key` has a value.
  ///
  /// - Complexity: O(1); no disk access.
  public func contains(_ key: String) throws -> Bool {
    try locate(key) != nil
  }

  /// The number of keys the store's users wrote: every key but those of the groups reserved
  /// for the layers above (a collection's index entries and catalogues, whose groups start with
  /// U+0001). 0 once the store is closed: `close()` releases the index. `stats().keys` counts
  /// every key.
  ///
  /// - Complexity: O(g) for the g groups.
  public var count: Int {
    state.withLock { state in
      var reserved = 0
      for group in state.directory.groupCounts where group.group.utf8.first == CaskFormat.reservedGroupByte {
        reserved += group.count
      }
      return state.directory.count - reserved
    }
  }

  /// Every key, sorted by UTF-8 bytes.
  ///
  /// - Complexity: O(n log n); no disk access.
  public func keys() throws -> [String] {
    try keys(withPrefix: "")
  }

  /// The keys that start with `prefix` (compared by UTF-8 bytes), sorted.
  ///
  /// - Complexity: O(n) to filter plus O(m log m) to sort the m matches; no disk access.
  public func keys(withPrefix prefix: String) throws -> [String] {
    let prefixBytes = Array(prefix.utf8)
    let matches = try state.withLock { state -> [String] in
      try state.throwIfClosed()
      let all = state.directory.allKeys
      try state.throwIfDamaged()
      return prefixBytes.isEmpty ? all : all.filter { $0.utf8.starts(with: prefixBytes) }
    }
    return matches.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
  }

  func locate(_ key: String) throws -> (RecordLocation, Segment)? {
    try IndexKey.withUTF8(of: key) { bytes in
      try state.withLock { state in
        try state.throwIfClosed()
        let location = state.directory.location(forBytes: bytes)
        try state.throwIfDamaged()
        guard let location, let segment = state.segments[location.segment] else { return nil }
        return (location, segment)
      }
    }
  }

  // MARK: Writing

  /// Stores `value` under `key`, replacing any value it had.
  ///
  /// - Throws: `CaskError.invalidKey`, `.valueTooLarge`, `.readOnly`, `.closed`, `.io` (for
  ///   example `ENOSPC`; the store stays consistent and usable once space is free).
  /// - Complexity: one encryption and one append; with `.always`, one shared sync.
  public func put(_ value: Data, forKey key: String) throws {
    try Self.validate(key: key)
    try Self.validate(value: value)
    _ = try commit(CaskBatch(single: .put(key: key, value: value)))
  }

  /// Removes `key`.
  ///
  /// - Returns: whether the key existed (a tombstone is written only then).
  /// - Complexity: as `put`.
  @discardableResult
  public func delete(_ key: String) throws -> Bool {
    try Self.validate(key: key)
    return try commit(CaskBatch(single: .delete(key: key))).deleted > 0
  }

  /// Applies the puts and deletes recorded by `body` atomically: all of them survive a crash
  /// or none does. Nothing is written if `body` throws.
  ///
  /// - Throws: what `body` throws, and the errors of `put`.
  /// - Complexity: one append and (with `.always`) one sync for the whole batch.
  public func batch(_ body: (inout CaskBatch) throws -> Void) throws {
    var batch = CaskBatch(owner: self)
    try body(&batch)
    _ = try commit(batch)
  }

  /// Forces everything written so far to disk.
  public func sync() throws {
    try userCode.refuse("sync")
    let ticket = try writer.withLock { writer -> UInt64 in
      try writer.throwIfClosed()
      try writer.throwIfFailed()
      return writer.ticket
    }
    try waitUntilDurable(ticket)
  }

  /// Size and health figures.
  ///
  /// - Complexity: O(segments).
  public func stats() -> CaskStats {
    state.withLock { state in
      CaskStats(
        keys: state.directory.count, liveBytes: state.directory.liveBytes,
        deadBytes: state.directory.deadBytes, segments: state.segments.count, recovery: state.recovery,
        compactions: state.compactions, automaticCompactionFailure: background.compactionFailure,
        sortedPageCacheBytes: state.directory.sorted?.cache.bytes ?? 0,
        sortedChangeBytes: state.directory.sorted?.changeBytes ?? 0)
    }
  }
}

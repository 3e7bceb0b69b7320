extension CaskStore {
  /// When writes reach the disk.
  public enum Durability: Sendable, Equatable {
    /// Every `put`, `delete` and `batch` is on disk (`fdatasync`) before it returns.
    /// Concurrent writers share one sync (group commit).
    case always
    /// A background thread syncs every `seconds`; a crash loses at most that window.
    case periodic(seconds: Double)
    /// The operating system decides; `sync()` and `close()` still sync.
    case never
  }

  /// When compaction starts by itself: it merges the sealed segments, and leaves the one being
  /// written to the writer (its dead bytes are reclaimed once it fills and is sealed).
  public struct AutoCompaction: Sendable, Equatable {
    /// Compact when the sealed segments' dead bytes are at least this fraction of their bytes...
    public var deadRatio: Double
    /// ...and at least this many bytes.
    public var minimumDeadBytes: UInt64
    /// How much the compaction thread's nice value is raised (Linux; 0 leaves it as the
    /// store's other threads). Default 10: the thread gets about a tenth of the CPU a thread
    /// of the application gets when both want it, so a compaction that starts in the middle
    /// of a run of writes slows them little (on a busy machine a compaction takes longer in
    /// return; the space it frees is freed later). `compact()` runs on the caller's thread,
    /// at the caller's priority.
    public var niceIncrement: Int32

    public init(deadRatio: Double = 0.5, minimumDeadBytes: UInt64 = 64 << 20, niceIncrement: Int32 = 10) {
      self.deadRatio = deadRatio
      self.minimumDeadBytes = minimumDeadBytes
      self.niceIncrement = niceIncrement
    }
  }

  /// When checkpoints are written: at every seal of a full segment, at close, and after
  /// `interval` bytes of new log, in the background, once the store holds `minimumKeys`.
  public struct Checkpoints: Sendable, Equatable {
    /// Bytes of log appended after which the next checkpoint is taken. Default 64 MiB: open
    /// then replays at most about that much log after the checkpoint.
    public var interval: UInt64
    /// Stores with fewer live keys get no checkpoint. Default 10,000: below that, the hints
    /// are read in about as long as a checkpoint (Docs/FORMAT.md, section 13).
    public var minimumKeys: Int
    /// How far apart checkpoints are as the store grows: one at a seal or after `interval`
    /// waits until the log appended since the last is at least `spacing` times that one's
    /// tables (32 bytes a key it held). Default 16. Each checkpoint costs the writer a copy of
    /// the tables and the background a pass over every key: taken every `interval` bytes, a
    /// fill's checkpoints cost it more with every key already stored (a quarter of a fill's
    /// CPU at a million keys). Spaced so, the tables checkpointed are at most 1/`spacing` of
    /// the log written. The price is an open after a crash: it reads up to that much log after
    /// the checkpoint (the sealed segments' hints, the newest segment from the covered place);
    /// a close always writes one. 0: a checkpoint at every seal and every `interval`.
    public var spacing: Int
    /// Bytes of a checkpoint's sorted pages (the secondary indexes' keys in order) kept in
    /// memory once read, the least recently used dropped first. Default 8 MiB. `stats()`
    /// reports what it holds.
    public var sortedPageCacheBytes: Int

    public init(
      interval: UInt64 = 64 << 20, minimumKeys: Int = 10_000, spacing: Int = 16,
      sortedPageCacheBytes: Int = CaskFormat.defaultSortedPageCacheBytes
    ) {
      self.interval = interval
      self.minimumKeys = minimumKeys
      self.spacing = max(0, spacing)
      self.sortedPageCacheBytes = sortedPageCacheBytes
    }
  }

  /// How a store is opened.
  public struct Options: Sendable {
    /// When writes reach the disk. Default `.always`: nothing acknowledged is lost in a crash.
    public var durability: Durability = .always
    /// A segment is sealed and a new one started when it would grow past this size.
    /// Default 256 MiB; at most 4 GiB − 1.
    public var segmentSizeLimit: UInt64 = 256 << 20
    /// Background compaction policy; `nil` compacts only when `compact()` is called.
    public var autoCompaction: AutoCompaction? = AutoCompaction()
    /// Create the store if the directory is missing or empty. Default `true`.
    public var createIfMissing = true
    /// Open for reading only, sharing the lock with other read-only openers.
    public var readOnly = false
    /// The file system; tests substitute one that injects faults.
    public var fileSystem: any FileSystem = PosixFileSystem()
    /// The format version a new store is created with: `CaskFormat.formatVersion` (5: records
    /// bound to their place, an authenticated header, chained segments) by default, or 3 or 2
    /// for files that an older CipherCask must read (4 is what a version 3 store becomes at
    /// its first password change, never created as such: `unsupportedVersion`). An existing
    /// store keeps the version in its header; this option does not change it.
    public var newStoreFormatVersion: UInt16 = CaskFormat.formatVersion
    /// How the header of a new password store derives its keys from the password, and what a
    /// password change uses for a store opened with keys. Default `.standard` (scrypt,
    /// N = 2^15, r = 8, p = 1); `.rncryptor` for a header any RNCryptor v3 implementation
    /// opens. An existing store keeps the derivation its header names.
    public var keyDerivation: KeyDerivation = .standard
    /// Open a store whose files disagree with its manifest or whose records are not where
    /// they were sealed for (`CaskError.integrityViolation`) anyway, read-only, for salvage;
    /// `stats().recovery.integrityViolations` lists what was found. Default `false`: such a
    /// store is refused.
    public var allowIntegrityViolations = false
    /// An `integrityToken()` taken earlier: open refuses the store
    /// (`CaskError.integrityViolation`) when it is older than that state. `nil`: no check.
    public var expectedIntegrityToken: String?
    /// Bytes of records kept in memory, sealed as on disk (never plaintext), so that a `get`
    /// of a recently read key neither reads its file nor copies out of its mapping. Default 0
    /// (off): where segments are mapped (`PosixFileSystem` on x86-64 Linux) a get makes no
    /// system call anyway, and the cache's lookup and insertions cost more over a large store
    /// than its hits save over a small one (Docs/BENCHMARKS.md); for file systems that cannot
    /// map, a few MiB keep hot gets off the disk. A record larger than a quarter of it is
    /// never kept.
    public var recordCacheBytes = 0
    /// Threads that seal the records of one large batch, the calling thread among them: AES-CBC
    /// is serial inside a message, so one thread seals at the cipher's speed and no faster, while
    /// the messages of a batch are independent. Default: the cores this process may use, at most
    /// four; 1 seals on the calling thread only. A batch's CPU time is the same either way. Each
    /// further thread needs 32 KiB of values or 128 records of the batch: a batch under 64 KiB
    /// of values and 256 records seals on the calling thread alone.
    public var sealingThreads = SealingLanes.defaultLimit
    /// When a checkpoint of the key directory is written (Docs/FORMAT.md, section 18), which
    /// open loads instead of reading every hint, replaying only the log written after it.
    /// `nil` writes none (a checkpoint already there is still used while it matches the log).
    public var checkpoints: Checkpoints? = Checkpoints()
    /// Whether open checks a checkpoint that authenticates against the log before it uses it
    /// (Docs/FORMAT.md, section 18). Always on; a test turns it off to show that the
    /// checkpoint tests catch a checkpoint trusted blindly.
    var checksCheckpoint = true
    /// Whether open uses a hint only when it states the segment's exact length (Docs/FORMAT.md,
    /// section 6). Always on; a test turns it off, open then taking a hint of a shorter segment
    /// as well, to show that the crash-state enumerator catches a stale hint trusted.
    var checksHintLength = true
    /// Always on; a test turns it off (with `checksCheckpoint`) to show that the crash-state
    /// enumerator catches a checkpoint put in place before the log it covers is synced (off,
    /// the checkpoint is written at once on the writer's thread, so the test is not a race).
    var syncsBeforeCheckpoint = true

    public init(
      durability: Durability = .always, segmentSizeLimit: UInt64 = 256 << 20,
      autoCompaction: AutoCompaction? = AutoCompaction(), createIfMissing: Bool = true, readOnly: Bool = false,
      fileSystem: any FileSystem = PosixFileSystem()
    ) {
      self.durability = durability
      self.segmentSizeLimit = segmentSizeLimit
      self.autoCompaction = autoCompaction
      self.createIfMissing = createIfMissing
      self.readOnly = readOnly
      self.fileSystem = fileSystem
    }
  }
}

/// What `open` found and repaired. Nothing here names a key or holds a value.
public struct RecoveryReport: Sendable, Equatable {
  /// Segments indexed from their hint files.
  public var segmentsFromHints = 0
  /// Segments indexed by reading every record.
  public var segmentsScanned = 0
  /// Segments whose index came from the checkpoint (Docs/FORMAT.md, section 18), the last of
  /// them then scanned from where the checkpoint ends, if the log goes on.
  public var segmentsFromCheckpoint = 0
  /// Why a checkpoint in the directory was not used (it does not match the log, or does not
  /// authenticate), or `nil`: none there, or it was used. Never names a key or a secret; not
  /// part of `isClean`, since open then indexes from the hints and the log as without one.
  public var checkpointIgnored: String?
  /// Bytes cut from the torn tail of the last segment.
  public var truncatedBytes: UInt64 = 0
  /// Zero bytes after the last record of the last segment, cut at open (left in place by a
  /// read-only open) without counting as damage: the space a writer under `.always` reserves
  /// ahead of itself (Docs/FORMAT.md, "Reserved space"), so after a crash under `.always` they
  /// cost nothing. After a crash under `.periodic` or `.never` a file system may also leave
  /// zeros where writes that were never synced should be, so there a non-zero count can mean
  /// writes lost within what that durability allows. Not part of `isClean`.
  public var zeroTailBytes: UInt64 = 0
  /// Records not applied: incomplete batches at the tail, or batches broken by damage.
  public var droppedRecords = 0
  /// Damaged regions skipped inside segments.
  public var corruptRegions: [CorruptRegion] = []
  /// Segment files that could not be used at all (bad header), by name.
  public var unreadableSegments: [String] = []
  /// What disagreed with the manifest, or records not at the place they were sealed for
  /// (format version 3): found only when open was allowed to go on
  /// (`Options.allowIntegrityViolations`); otherwise open throws the first.
  public var integrityViolations: [CorruptRegion] = []

  /// Whether anything was lost or repaired.
  public var isClean: Bool {
    truncatedBytes == 0 && droppedRecords == 0 && corruptRegions.isEmpty && unreadableSegments.isEmpty
      && integrityViolations.isEmpty
  }

  public init() {}
}

/// A snapshot of a store's size and health.
public struct CaskStats: Sendable, Equatable {
  /// Live keys.
  public var keys: Int
  /// Bytes of the newest records of live keys.
  public var liveBytes: UInt64
  /// Bytes of overwritten or deleted records and tombstones, reclaimable by compaction.
  public var deadBytes: UInt64
  /// Segment files.
  public var segments: Int
  /// What the last open recovered.
  public var recovery: RecoveryReport
  /// Compactions completed since open.
  public var compactions: Int
  /// Why the last automatic compaction failed (a full disk, say), or `nil` when it worked or
  /// none ran. The store stays as it was before a failed compaction; the next one that is due
  /// tries again.
  public var automaticCompactionFailure: CaskError? = nil
  /// Bytes of sorted checkpoint pages held in memory (at most
  /// `Options.Checkpoints.sortedPageCacheBytes`).
  public var sortedPageCacheBytes: Int = 0
  /// Bytes of keys of sorted groups changed since the checkpoint, held in memory.
  public var sortedChangeBytes: Int = 0
}

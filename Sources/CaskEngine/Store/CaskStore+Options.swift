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

  /// When compaction starts by itself.
  public struct AutoCompaction: Sendable, Equatable {
    /// Compact when dead bytes are at least this fraction of all bytes...
    public var deadRatio: Double
    /// ...and at least this many bytes.
    public var minimumDeadBytes: UInt64

    public init(deadRatio: Double = 0.5, minimumDeadBytes: UInt64 = 64 << 20) {
      self.deadRatio = deadRatio
      self.minimumDeadBytes = minimumDeadBytes
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
}

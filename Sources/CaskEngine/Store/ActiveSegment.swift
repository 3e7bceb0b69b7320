extension CaskStore {
  /// The segment being appended to. Its hint is built when it is sealed, from the index
  /// (the live records that are in it) and from `tombstones`: keeping a hint entry for every
  /// record in memory would cost more than the index itself.
  struct ActiveSegment: Sendable {
    var segment: Segment
    var end: UInt64
    /// The deletes written to this segment, which the index no longer holds.
    var tombstones: HintEntries
    var maxSequence: UInt64
    /// How far the file is known to reach: `end` plus the zeros reserved ahead of the writer
    /// under `.always` (`CaskStore.reserveSpace`).
    var reserved: UInt64
    /// How far the zeros `reserveSpace` wrote are known to reach (0: none known). An append
    /// that ends before it is copied into the segment's mapping instead of written with
    /// `pwrite`: those pages exist in the file and have their blocks, so the copy needs neither
    /// a system call nor new disk space. Anything that cuts the file resets it.
    var zeroed: UInt64 = 0
    /// Where the bytes not yet handed to the kernel's writeback start (`startWriteback`).
    var writebackFrom: UInt64 = 0
    /// Whether the scan at open found damage that stays in the segment: it then gets no hint
    /// when sealed or closed, so that every open scans it and reports the damage again.
    var keepsDamage = false
    /// Whether a hint on disk describes the segment at `end` exactly, the manifest listing the
    /// segment as active: set by an open that resumes a segment as a clean close left it. The
    /// first append writes nothing else (`resumeAppending`): once the segment grows the hint
    /// no longer states its length, and open trusts no hint that does not, so the hint stays
    /// until the segment's next hint replaces it, and nothing needs to be durable before the
    /// append. Prevents: a manifest write and a directory sync (two syncs, 5 ms and more on a
    /// busy disk) in the first write after every open.
    var hintCoversEnd = false
    /// Whether the manifest on disk lists the segment as sealed at `end`, its hint in place: a
    /// clean close by a version of the engine that sealed every segment at close. The first
    /// append then retires the hint and lists the segment as active before the segment grows
    /// (`resumeAppending`), or the next open would find a sealed segment grown.
    var sealedOnDisk = false

    init(segment: Segment, end: UInt64, tombstones: HintEntries, maxSequence: UInt64) {
      self.segment = segment
      self.end = end
      self.tombstones = tombstones
      self.maxSequence = maxSequence
      self.reserved = end
    }
  }
}

extension StoreOpener {
  /// What indexing one segment found.
  struct IndexedSegment {
    /// The segment's entries, kept only where they are needed afterwards (the last segment's
    /// tombstones come from them).
    var entries: [HintEntry] = []
    /// Where its records end (before a cut tail or reserved zeros).
    var end: UInt64
    /// The bytes of records the index was given (live or not).
    var listed: UInt64 = 0
    var maxSequence: UInt64 = 0
    /// Damage stays in the segment (anything but a cut tail).
    var keepsDamage = false
    /// Indexed from its hint (nothing scanned, nothing cut), or from the checkpoint alone.
    var fromHint = false
    /// Where the records it was indexed from begin when not where the segment's records begin
    /// (after the checkpoint, for the covered segment): the bytes before are counted already.
    var start: UInt64?
  }
}

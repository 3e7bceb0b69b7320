/// Where the current record of a key lives: 12 bytes, kept in a 32-byte slot of a
/// `KeyTable` with the key's hash and the key itself (up to 16 bytes) or its place in the
/// table's `KeyArena`.
struct RecordLocation: Hashable, Sendable {
  var segment: UInt32
  var offset: UInt32
  var length: UInt32
}

/// Live and dead bytes of one segment, for compaction decisions and `stats()`.
struct SegmentUsage: Sendable {
  var totalBytes: UInt64 = 0
  var deadBytes: UInt64 = 0
}

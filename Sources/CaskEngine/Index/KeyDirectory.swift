/// A key of the index. Keys compare by their exact UTF-8 bytes, not by Unicode canonical
/// equivalence as `String` does: "é" written as one code point and as "e" + accent are two
/// keys, as they are two byte strings on disk. Keys of up to 15 UTF-8 bytes are stored inline
/// (Swift's small-string form), so they cost no allocation.
struct IndexKey: Hashable, Sendable {
  let string: String

  init(_ string: String) {
    self.string = string
  }

  static func == (lhs: IndexKey, rhs: IndexKey) -> Bool {
    lhs.string.utf8.elementsEqual(rhs.string.utf8)
  }

  func hash(into hasher: inout Hasher) {
    let hashed: Void? = string.utf8.withContiguousStorageIfAvailable {
      hasher.combine(bytes: UnsafeRawBufferPointer($0))
    }
    if hashed == nil {
      var copy = string
      copy.makeContiguousUTF8()
      copy.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
  }
}

/// Where the current record of a key lives: 12 bytes, so that the index costs well under 64
/// bytes per key (16-byte key + 12-byte location per slot, at most 4/3 slots per key).
struct RecordLocation: Equatable, Sendable {
  var segment: UInt32
  var offset: UInt32
  var length: UInt32
}

/// Live and dead bytes of one segment, for compaction decisions and `stats()`.
struct SegmentUsage: Sendable {
  var totalBytes: UInt64 = 0
  var deadBytes: UInt64 = 0
}

/// The in-memory hash index: key -> location of its newest record, plus per-segment usage.
struct KeyDirectory: Sendable {
  var locations: [IndexKey: RecordLocation] = [:]
  var usage: [UInt32: SegmentUsage] = [:]

  /// Records a put at `location`; the record it replaces, if any, becomes dead.
  ///
  /// - Complexity: O(1) on average.
  mutating func applyPut(_ key: IndexKey, at location: RecordLocation) {
    usage[location.segment, default: SegmentUsage()].totalBytes += UInt64(location.length)
    if let old = locations.updateValue(location, forKey: key) {
      usage[old.segment, default: SegmentUsage()].deadBytes += UInt64(old.length)
    }
  }

  /// Records a tombstone at `location` (dead from the start); the key's record becomes dead.
  ///
  /// - Returns: whether the key was present.
  @discardableResult
  mutating func applyDelete(_ key: IndexKey, at location: RecordLocation) -> Bool {
    var segmentUsage = usage[location.segment, default: SegmentUsage()]
    segmentUsage.totalBytes += UInt64(location.length)
    segmentUsage.deadBytes += UInt64(location.length)
    usage[location.segment] = segmentUsage
    guard let old = locations.removeValue(forKey: key) else { return false }
    usage[old.segment, default: SegmentUsage()].deadBytes += UInt64(old.length)
    return true
  }

  var liveBytes: UInt64 { usage.values.reduce(0) { $0 + $1.totalBytes - min($1.totalBytes, $1.deadBytes) } }
  var deadBytes: UInt64 { usage.values.reduce(0) { $0 + min($1.totalBytes, $1.deadBytes) } }
}

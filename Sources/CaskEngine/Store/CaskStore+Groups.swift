import Foundation

/// Key groups: the keys whose part before the first U+0000 (`CaskFormat.keyGroupSeparator`)
/// is the same. The engine keeps each group in its own index table (`KeyDirectory`), so that
/// listing or counting a group costs the size of that group, whatever else the store holds.
/// The collection layer stores each collection as one group.
extension CaskStore {
  /// The keys whose part before the first U+0000 is `group`, sorted by UTF-8 bytes.
  ///
  /// - Complexity: O(m log m) for the m keys of the group, whatever else the store holds.
  public func keys(inGroup group: String) throws -> [String] {
    try state.withLock { state in
      try state.throwIfClosed()
      let keys = state.directory.keys(inGroup: group)
      try state.throwIfDamaged()
      return keys
    }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
  }

  /// Every group (for typed collections: every collection name) with its number of keys,
  /// sorted by the names' UTF-8 bytes. Names that differ only in Unicode normalization are
  /// two groups, as everywhere in the store (a `[String: Int]` would merge them).
  ///
  /// - Complexity: O(g log g) for g groups.
  public func groups() -> [GroupCount] {
    state.withLock { $0.directory.groupCounts }.sorted { $0.group.utf8.lexicographicallyPrecedes($1.group.utf8) }
  }

  /// A group and its number of keys.
  public struct GroupCount: Sendable, Hashable {
    public var group: String
    public var count: Int

    public init(group: String, count: Int) {
      self.group = group
      self.count = count
    }
  }

  /// The number of keys in a group.
  ///
  /// - Complexity: O(1).
  public func count(inGroup group: String) -> Int {
    state.withLock { $0.directory.count(inGroup: group) }
  }

  /// Every key of a group with its value, read in file order (sequential I/O).
  ///
  /// - Parameter onDamage: called for a record that fails to authenticate, with its key;
  ///   return normally to skip it, or throw to stop. By default the error is thrown.
  /// - Complexity: O(m) reads and decryptions for the m keys of the group.
  public func entries(
    inGroup group: String, onDamage: (String, CaskError) throws -> Void = { throw $1 }
  ) throws -> [(key: String, value: Data)] {
    var result: [(key: String, value: Data)] = []
    try forEachEntry(inGroup: group, onDamage: onDamage) { result.append(($0, $1)) }
    return result
  }

  /// Calls `body` with every key of a group and its value, one at a time, in file order
  /// (sequential I/O): a value `body` does not keep is not held, and a `body` that throws
  /// stops the reading there. The keys and values are those of the moment of the call, also
  /// when they are overwritten or deleted while `body` runs (their records stay readable).
  ///
  /// - Parameter onDamage: as for `entries(inGroup:onDamage:)`.
  /// - Throws: what `body` or `onDamage` throws, `CaskError.closed`, `.io`.
  /// - Complexity: O(m) reads and decryptions for the m keys of the group, until `body` stops.
  public func forEachEntry(
    inGroup group: String, onDamage: (String, CaskError) throws -> Void = { throw $1 },
    _ body: (_ key: String, _ value: Data) throws -> Void
  ) throws {
    let (entries, segments) = try state.withLock { state in
      try state.throwIfClosed()
      let entries = state.directory.entries(inGroup: group)
      try state.throwIfDamaged()
      return (entries, state.segments)
    }
    try forEachValue(
      of: entries, inOrder: Self.fileOrder(of: entries, segments: segments), segments: segments, onDamage: onDamage,
      body)
  }

  /// The positions of `entries` ordered by segment (oldest first) and offset, as a scan reads
  /// them; entries whose segment is not among `segments` are left out.
  ///
  /// Sorts one 64-bit word per record (the segment's rank above the offset) with the record's
  /// position beside it. Prevents: a comparison sort that moves the records' strings and
  /// segment references and reads two segments' orders at every comparison (a twentieth of
  /// `all()` over a small collection), and a reordered copy of the records (a retain and a
  /// release of each key).
  static func fileOrder(
    of entries: [(key: String, location: RecordLocation)], segments: [UInt32: Segment]
  ) -> [Int] {
    // Each segment's rank in file order (a store has few segments; a record has one lookup).
    var rank: [UInt32: UInt64] = [:]
    rank.reserveCapacity(segments.count)
    for (position, segment) in segments.values.sorted(by: { ($0.order, $0.id) < ($1.order, $1.id) }).enumerated() {
      rank[segment.id] = UInt64(position)
    }
    var order: [(key: UInt64, index: Int)] = []
    order.reserveCapacity(entries.count)
    for (index, entry) in entries.enumerated() {
      guard let segmentRank = rank[entry.location.segment] else { continue }
      order.append((segmentRank << 32 | UInt64(entry.location.offset), index))
    }
    order.sort { $0.key < $1.key }
    return order.map(\.index)
  }

}

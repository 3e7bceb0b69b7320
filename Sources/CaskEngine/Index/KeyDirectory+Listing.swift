/// Reading a `KeyDirectory` without changing it: its keys (all, or one group's, as strings or
/// packed), a group's entries and counts, and the live records of a set of segments.
extension KeyDirectory {
  /// Every key.
  ///
  /// - Complexity: O(n).
  var allKeys: [String] {
    var keys: [String] = []
    keys.reserveCapacity(count)
    ungrouped.forEachEntry { key, _ in keys.append(key) }
    for table in groups.tables { table.forEachEntry { key, _ in keys.append(key) } }
    return keys
  }

  /// The keys of one group (full keys, separator included).
  ///
  /// - Complexity: O(size of the group).
  func keys(inGroup group: String) -> [String] {
    var keys: [String] = []
    groups[IndexKey(group)]?.forEachEntry { key, _ in keys.append(key) }
    return keys
  }

  /// The keys of one group copied back to back into `PackedKeys`, making no `String`.
  ///
  /// - Complexity: O(size of the group).
  func packedKeys(inGroup group: String) -> PackedKeys {
    var packed = PackedKeys()
    guard let table = groups[IndexKey(group)] else { return packed }
    packed.reserveCapacity(keys: table.count)
    table.forEachEntryBytes { key, _ in packed.append(key) }
    return packed
  }

  /// The keys and locations of one group.
  func entries(inGroup group: String) -> [(key: String, location: RecordLocation)] {
    guard let table = groups[IndexKey(group)] else { return [] }
    var entries: [(key: String, location: RecordLocation)] = []
    entries.reserveCapacity(table.count)
    table.forEachEntry { key, location in entries.append((key, location)) }
    return entries
  }

  /// Every group with its number of keys.
  ///
  /// - Complexity: O(number of groups).
  var groupCounts: [CaskStore.GroupCount] {
    zip(groups.names, groups.tables).map { CaskStore.GroupCount(group: $0.string, count: $1.count) }
  }

  /// The number of keys in one group.
  ///
  /// - Complexity: O(1).
  func count(inGroup group: String) -> Int {
    groups[IndexKey(group)]?.count ?? 0
  }

  /// How many live keys have their record in one of `segments`, and those records' bytes.
  ///
  /// - Complexity: O(n) in the number of keys.
  func liveRecords(inSegments segments: Set<UInt32>) -> (count: Int, bytes: UInt64) {
    var count = 0
    var bytes: UInt64 = 0
    let add = { (location: RecordLocation) in
      guard segments.contains(location.segment) else { return }
      count += 1
      bytes += UInt64(location.length)
    }
    ungrouped.forEachLocation(add)
    for table in groups.tables { table.forEachLocation(add) }
    return (count, bytes)
  }

  /// The live keys whose newest record is in segment `id` as put entries of a hint, in
  /// hash order, making no `String`.
  ///
  /// - Complexity: O(n) in the number of keys.
  ///
  /// A put whose record carries attached keys that still point at it lists them as its
  /// attachment section (the keys themselves get no entries).
  func hintEntries(inSegment id: UInt32) -> HintEntries {
    var entries = HintEntries()
    var attached: [UInt32: [String]] = [:]
    let collect = { (key: UnsafeRawBufferPointer, location: RecordLocation) in
      guard location.length > 0 else {
        attached[location.offset, default: []].append(String(decoding: key, as: UTF8.self))
        return
      }
      entries.append(isDelete: false, offset: location.offset, length: location.length, key: key)
    }
    ungrouped.forEachEntryBytes(inSegment: id, collect)
    for table in groups.tables { table.forEachEntryBytes(inSegment: id, collect) }
    guard !attached.isEmpty else { return entries }
    var withSections = HintEntries()
    entries.forEachEntryWithSection { isDelete, offset, length, key, _ in
      let keys = attached[offset] ?? []
      let section = (try? AttachedKeys.encode(keys, owner: String(decoding: key, as: UTF8.self))) ?? nil
      (section ?? []).withUnsafeBytes {
        withSections.append(isDelete: isDelete, offset: offset, length: length, key: key, attached: $0)
      }
    }
    return withSections
  }
}

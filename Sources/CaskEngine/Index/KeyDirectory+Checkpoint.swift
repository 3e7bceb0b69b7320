/// What a checkpoint takes from the key directory, and gives back to it at open.
extension KeyDirectory {
  /// Every live key as a put entry, grouped by the segment its record is in, in one pass over
  /// the tables, making no `String`.
  ///
  /// - Complexity: O(capacity of the tables).
  func entriesBySegment() -> [UInt32: HintEntries] {
    var bySegment: [UInt32: HintEntries] = [:]
    let collect = { (key: UnsafeRawBufferPointer, location: RecordLocation) in
      bySegment[location.segment, default: HintEntries()].append(
        isDelete: false, offset: location.offset, length: location.length, key: key)
    }
    ungrouped.forEachEntryBytes(collect)
    for table in groups.tables { table.forEachEntryBytes(collect) }
    return bySegment
  }

  /// The number of keys in each table: what open sizes the tables with before it loads a
  /// checkpoint's pages.
  var tableSizes: HintSizes {
    HintSizes(
      ungrouped: ungrouped.count,
      groups: zip(groups.names, groups.tables).map { HintSizes.Group(name: Array($0.string.utf8), puts: $1.count) })
  }
}

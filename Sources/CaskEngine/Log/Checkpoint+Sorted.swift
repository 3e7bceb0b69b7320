/// The sorted groups of a checkpoint (Docs/FORMAT.md, section 18): for every group whose name
/// begins with `CaskFormat.reservedGroupByte` (the layers above keep secondary indexes there),
/// its keys in byte order, in pages of their own, so that a count or a walk of a range of them
/// reads only the pages it needs (`SortedGroupView`). The root lists each such group's pages
/// with their first key and number of keys.
extension Checkpoint {
  /// One sorted page as the root lists it.
  struct SortedPageEntry: Sendable, Equatable {
    var count: UInt32
    /// The page's first key (the part after the group's name and U+0000).
    var firstKey: [UInt8]
  }

  /// A sorted group as the root lists it: the table it is the keys of, and its pages in order.
  struct SortedGroupEntry: Sendable, Equatable {
    var table: UInt32
    var pages: [SortedPageEntry]
  }

  /// Whether a table of this name gets sorted pages.
  static func isSorted(name: [UInt8]) -> Bool {
    name.first == CaskFormat.reservedGroupByte
  }

  /// The number of sorted pages, which come after the tables' pages.
  var sortedPageCount: Int { sortedGroups.reduce(0) { $0 + $1.pages.count } }

  func appendSortedGroups(to root: inout ByteWriter) {
    root.append(UInt32(sortedGroups.count))
    for group in sortedGroups {
      root.append(group.table)
      root.append(UInt32(group.pages.count))
      for page in group.pages {
        root.append(page.count)
        root.append(UInt16(page.firstKey.count))
        root.append(contentsOf: page.firstKey)
      }
    }
  }

  /// Reads the root's sorted groups: exactly one for every table a sorted group's name
  /// gives, in table order, its pages' counts adding up to the table's and their first keys
  /// in increasing order. `nil` when anything is out of place.
  static func decodeSortedGroups(_ reader: inout ByteReader, tables: [TableEntry]) -> [SortedGroupEntry]? {
    let expected = tables.indices.filter { isSorted(name: tables[$0].name) }
    guard let count = reader.readUInt32(), Int(count) == expected.count,
      UInt64(count) * UInt64(CaskFormat.checkpointSortedGroupLength) <= UInt64(reader.remaining)
    else { return nil }
    var groups: [SortedGroupEntry] = []
    for table in expected {
      guard let number = reader.readUInt32(), Int(number) == table, let pageCount = reader.readUInt32(),
        pageCount > 0, UInt64(pageCount) * UInt64(CaskFormat.checkpointSortedPageRefLength) <= UInt64(reader.remaining)
      else { return nil }
      var pages: [SortedPageEntry] = []
      pages.reserveCapacity(Int(pageCount))
      var keys: UInt64 = 0
      for _ in 0..<pageCount {
        guard let keyCount = reader.readUInt32(), keyCount > 0, let length = reader.readUInt16(), length > 0,
          let key = reader.readBytes(Int(length))
        else { return nil }
        let firstKey = Array(key)
        if let previous = pages.last, SortedKeyOrder.compare(previous.firstKey, firstKey) >= 0 { return nil }
        keys += UInt64(keyCount)
        pages.append(SortedPageEntry(count: keyCount, firstKey: firstKey))
      }
      guard keys == tables[table].count else { return nil }
      groups.append(SortedGroupEntry(table: number, pages: pages))
    }
    return groups
  }

  /// The sorted groups' bases, reading their pages from `pages` through `cache`; the first
  /// sorted page is number `tablePagePlans.count`.
  func sortedBases(pages: CheckpointPages, cache: SortedPageCache) -> [IndexKey: SortedGroupBase] {
    var number = tablePagePlans.count
    var bases: [IndexKey: SortedGroupBase] = [:]
    for group in sortedGroups {
      let name = IndexKey(String(decoding: tables[Int(group.table)].name, as: UTF8.self))
      bases[name] = SortedGroupBase(
        pages: pages, cache: cache, table: Int(group.table), firstPage: number, entries: group.pages)
      number += group.pages.count
    }
    return bases
  }

  /// The sorted pages of group `name` (its bytes), whose keys `table` holds: merged from the
  /// group's view when the directory has one (no sort), else collected and sorted.
  ///
  /// - Throws: `CaskError.corrupt` when a page of the view's checkpoint fails its checks.
  /// - Complexity: O(m) with a view, O(m log m) without, for the group's m keys.
  static func sortedPages(of directory: KeyDirectory, name: [UInt8], table: KeyTable) throws -> [(
    contents: [UInt8], count: Int, firstKey: [UInt8]
  )] {
    var builder = SortedKeyPages.Builder()
    let group = IndexKey(String(decoding: name, as: UTF8.self))
    if let view = directory.sortedView(ofGroup: group), view.count == table.count {
      try view.walk(from: nil, to: nil) { key in
        builder.append(key)
        return true
      }
      return builder.finish()
    }
    var keys = PackedKeys()
    keys.reserveCapacity(keys: table.count)
    table.forEachEntryBytes { key, _ in
      if key.count > name.count { keys.append(UnsafeRawBufferPointer(rebasing: key[(name.count + 1)...])) }
    }
    keys.bytes.withUnsafeBytes { bytes in
      let order = (0..<keys.count).sorted { left, right in
        SortedKeyOrder.compare(
          UnsafeRawBufferPointer(rebasing: bytes[keys.range(of: left)]),
          UnsafeRawBufferPointer(rebasing: bytes[keys.range(of: right)])) < 0
      }
      for index in order { builder.append(UnsafeRawBufferPointer(rebasing: bytes[keys.range(of: index)])) }
    }
    return builder.finish()
  }

  /// Reads and checks every sorted page (what a reader that only checks a file wants).
  ///
  /// - Throws: `Rejection` at the first page that does not check out.
  func checkSortedPages(_ pages: CheckpointPages) throws(Rejection) {
    let cache = SortedPageCache(limit: 0)
    for base in sortedBases(pages: pages, cache: cache).values {
      for index in 0..<base.pageCount {
        do { _ = try base.page(index) } catch { throw Rejection(reason: "a sorted page does not check out") }
      }
    }
  }
}

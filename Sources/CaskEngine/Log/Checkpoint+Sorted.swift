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

  /// A sorted group as the root lists it: the table it is the keys of, its pages in order,
  /// and for each chunk of the table's long keys the rank of its first key among the group's
  /// keys (the chunks have no pages: they are made again from the sorted pages).
  struct SortedGroupEntry: Sendable, Equatable {
    var table: UInt32
    var pages: [SortedPageEntry]
    var chunkStarts: [UInt32] = []
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
      for start in group.chunkStarts { root.append(start) }
    }
  }

  /// Reads the root's sorted groups: exactly one for every table a sorted group's name
  /// gives, in table order, its pages' counts adding up to the table's and their first keys
  /// in increasing order, then one start for each of the table's chunks, in strictly
  /// increasing order and below the table's count. `nil` when anything is out of place.
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
      guard keys == tables[table].count,
        tables[table].chunkLengths.count * 4 <= reader.remaining
      else { return nil }
      var starts: [UInt32] = []
      starts.reserveCapacity(tables[table].chunkLengths.count)
      for _ in tables[table].chunkLengths {
        guard let start = reader.readUInt32(), UInt64(start) < keys, starts.last.map({ $0 < start }) ?? true
        else { return nil }
        starts.append(start)
      }
      groups.append(SortedGroupEntry(table: number, pages: pages, chunkStarts: starts))
    }
    return groups
  }

  /// The sorted groups' bases, reading their pages from `pages` through `cache`; the first
  /// sorted page is number `tablePageCount`.
  func sortedBases(pages: CheckpointPages, cache: SortedPageCache) -> [IndexKey: SortedGroupBase] {
    var bases: [IndexKey: SortedGroupBase] = [:]
    for (table, base) in sortedBasesByTable(pages: pages, cache: cache) {
      bases[IndexKey(String(decoding: tables[table].name, as: UTF8.self))] = base
    }
    return bases
  }

  /// `sortedBases`, by the number of their table in the root.
  func sortedBasesByTable(pages: CheckpointPages, cache: SortedPageCache) -> [Int: SortedGroupBase] {
    var number = tablePageCount
    var bases: [Int: SortedGroupBase] = [:]
    for group in sortedGroups {
      bases[Int(group.table)] = SortedGroupBase(
        pages: pages, cache: cache, table: Int(group.table), firstPage: number, entries: group.pages)
      number += group.pages.count
    }
    return bases
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

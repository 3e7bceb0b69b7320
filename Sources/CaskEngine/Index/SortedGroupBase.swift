/// A sorted group's keys as a checkpoint holds them (`Checkpoint+Sorted.swift`): the page
/// directory in memory (each page's first key and where its keys start in the group's order),
/// the pages themselves read, authenticated and decoded on demand through the store's
/// `SortedPageCache`. Immutable: every copy of the index shares it.
final class SortedGroupBase: Sendable {
  private let pages: CheckpointPages
  private let cache: SortedPageCache
  private let table: Int
  private let firstPage: Int
  private let firstKeys: [[UInt8]]
  private let counts: [Int]
  /// `starts[p]`: the keys before page `p`; the last element is the group's count.
  private let starts: [Int]

  init(
    pages: CheckpointPages, cache: SortedPageCache, table: Int, firstPage: Int, entries: [Checkpoint.SortedPageEntry]
  ) {
    self.pages = pages
    self.cache = cache
    self.table = table
    self.firstPage = firstPage
    firstKeys = entries.map(\.firstKey)
    counts = entries.map { Int($0.count) }
    var starts = [0]
    for entry in entries { starts.append(starts[starts.count - 1] + Int(entry.count)) }
    self.starts = starts
  }

  /// The number of keys.
  var count: Int { starts[starts.count - 1] }

  var pageCount: Int { firstKeys.count }

  /// Page `index` of the group, from the cache or read and checked now.
  ///
  /// - Throws: `CaskError.corrupt` when the page cannot be read whole, does not authenticate
  ///   or is not the page the root lists there (the index is then damaged for good, as when a
  ///   slot page fails).
  func page(_ index: Int) throws -> SortedPage {
    try cache.page(firstPage + index) { () throws -> SortedPage in
      if let damage = pages.damage { throw damage }
      let number = firstPage + index
      let contents: [UInt8]
      do throws(Checkpoint.Rejection) {
        contents = Array(
          try pages.contents(of: number, kind: CaskFormat.checkpointPageSorted, table: table, count: counts[index]))
      } catch {
        throw pages.fail(page: number, error)
      }
      let next = index + 1 < firstKeys.count ? firstKeys[index + 1] : nil
      guard
        let page = contents.withUnsafeBytes({
          SortedKeyPages.decode($0, count: counts[index], firstKey: firstKeys[index], nextFirstKey: next)
        })
      else { throw pages.fail(page: number, Checkpoint.Rejection(reason: "page \(number) is malformed")) }
      return page
    }
  }

  /// The number of pages whose first key is before `bound`.
  private func pagesBefore(_ bound: UnsafeRawBufferPointer) -> Int {
    var low = 0
    var high = firstKeys.count
    while low < high {
      let middle = (low + high) / 2
      if firstKeys[middle].withUnsafeBytes({ SortedKeyOrder.compare($0, bound) < 0 }) {
        low = middle + 1
      } else {
        high = middle
      }
    }
    return low
  }

  /// The number of keys before `bound`: reads at most one page.
  func rank(of bound: UnsafeRawBufferPointer) throws -> Int {
    let before = pagesBefore(bound)
    guard before > 0 else { return 0 }
    return starts[before - 1] + (try page(before - 1).lowerBound(bound))
  }

  /// The page holding the key at `rank` (below `count`) and the key's place in it.
  func locate(rank: Int) -> (page: Int, index: Int) {
    var low = 0
    var high = firstKeys.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if starts[middle] <= rank { low = middle } else { high = middle - 1 }
    }
    return (low, rank - starts[low])
  }

  /// Calls `body` with page `index`'s first key (held in memory: no page is read).
  func withFirstKey<R>(ofPage index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try firstKeys[index].withUnsafeBytes(body)
  }

  /// Page `index`'s number among the checkpoint's pages.
  func pageNumber(_ index: Int) -> Int { firstPage + index }

  /// The number of keys before page `index`.
  func start(ofPage index: Int) -> Int { starts[index] }
}

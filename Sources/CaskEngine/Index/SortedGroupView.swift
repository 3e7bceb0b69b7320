/// The keys of a sorted group at one moment, in byte order, each the part after the group's
/// name and U+0000: the keys its checkpoint held (`SortedGroupBase`, read page by page) less
/// those removed since, plus those added since (both kept in memory by the writer,
/// `KeyDirectory+Sorted.swift`). A value: a reader's view does not change as the store is
/// written after it was taken.
///
/// Counts and walks are exact or throw: a page that fails its checks throws
/// `CaskError.corrupt`, as a slot page does.
package struct SortedGroupView: Sendable {
  let base: SortedGroupBase?
  /// Keys present now and not in the base.
  let added: SortedKeySet
  /// Keys of the base no longer present.
  let removed: SortedKeySet

  /// The number of keys.
  package var count: Int { (base?.count ?? 0) - removed.count + added.count }

  /// The number of keys before `bound` (every key for `nil` when `isUpper`, none otherwise).
  ///
  /// - Complexity: at most one page read, O(log n) comparisons.
  private func rank(of bound: [UInt8]?, isUpper: Bool) throws -> Int {
    guard let bound else { return isUpper ? count : 0 }
    return try bound.withUnsafeBytes { bound in
      (try base?.rank(of: bound) ?? 0) - removed.rank(of: bound) + added.rank(of: bound)
    }
  }

  /// The number of keys not before `lower` and before `upper` (`nil`: no bound).
  ///
  /// - Throws: `CaskError.corrupt` when a page it reads fails its checks.
  /// - Complexity: at most two page reads (the boundary pages), O(log n) comparisons.
  package func count(from lower: [UInt8]?, to upper: [UInt8]?) throws -> Int {
    max(0, try rank(of: upper, isUpper: true) - rank(of: lower, isUpper: false))
  }

  /// The number of keys that begin with `prefix`.
  package func count(prefix: [UInt8]) throws -> Int {
    try count(from: prefix, to: Self.successor(of: prefix))
  }

  /// The first byte string after every string that begins with `prefix`, or `nil` (no such
  /// string: `prefix` is all 0xFF).
  package static func successor(of prefix: [UInt8]) -> [UInt8]? {
    var bound = prefix
    while let last = bound.last {
      if last < 0xFF {
        bound[bound.count - 1] = last + 1
        return bound
      }
      bound.removeLast()
    }
    return nil
  }

  /// Calls `body` with the keys not before `lower` and before `upper`, in byte order (the
  /// reverse with `descending`), the first `skipping` of them left out, until it returns
  /// false.
  ///
  /// - Throws: what `body` throws; `CaskError.corrupt` when a page it reads fails its checks.
  /// - Complexity: O(log n) to find where to start (pages found by their first keys, so at
  ///   most a few pages read), then one page read per page walked and O(log n) per key.
  package func walk(
    from lower: [UInt8]?, to upper: [UInt8]?, descending: Bool = false, skipping: Int = 0,
    _ body: (UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    let low = try rank(of: lower, isUpper: false)
    let high = try rank(of: upper, isUpper: true)
    guard high - low > max(0, skipping) else { return }
    var cursor = try Cursor(view: self, rank: descending ? high - skipping : low + skipping)
    var left = descending ? high - skipping - low : high - low - skipping
    while left > 0 {
      let more = try descending ? cursor.previous(body) : cursor.next(body)
      left -= 1
      guard more else { return }
    }
  }

  /// A place between two keys of the view: the base keys from `baseIndex` and the added
  /// keys from `addedIndex` lie after it.
  private struct Cursor {
    let view: SortedGroupView
    var baseIndex: Int
    var addedIndex: Int
    private var page: (number: Int, keys: SortedPage)?

    /// The place before the key at `rank` (after every key for `rank == count`).
    init(view: SortedGroupView, rank: Int) throws {
      self.view = view
      baseIndex = 0
      addedIndex = 0
      var reached = 0
      if let base = view.base, base.count > 0 {
        // The last base key with at most `rank` keys of the view before it: first among the
        // pages' first keys (no page read), then in that page.
        func before(_ key: UnsafeRawBufferPointer, at index: Int) -> Int {
          index - view.removed.rank(of: key) + view.added.rank(of: key)
        }
        var low = 0
        var high = base.pageCount - 1
        var found = -1
        while low <= high {
          let middle = (low + high) / 2
          if base.withFirstKey(ofPage: middle, { before($0, at: base.start(ofPage: middle)) }) <= rank {
            found = middle
            low = middle + 1
          } else {
            high = middle - 1
          }
        }
        if found >= 0 {
          let keys = try base.page(found)
          var low = 0
          var high = keys.count - 1
          var index = 0
          while low <= high {
            let middle = (low + high) / 2
            if keys.withKey(middle, { before($0, at: base.start(ofPage: found) + middle) }) <= rank {
              index = middle
              low = middle + 1
            } else {
              high = middle - 1
            }
          }
          baseIndex = base.start(ofPage: found) + index
          keys.withKey(index) { key in
            addedIndex = view.added.rank(of: key)
            reached = before(key, at: baseIndex)
          }
          page = (found, keys)
        }
      }
      while reached < rank {
        _ = try next { _ in true }
        reached += 1
      }
    }

    private mutating func baseKey<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
      guard let base = view.base else { preconditionFailure("no base") }
      let (number, position) = base.locate(rank: index)
      if page?.number != number { page = (number, try base.page(number)) }
      return try page!.keys.withKey(position, body)
    }

    /// The next base key that is still present, from `index` on, forward or backward.
    private mutating func presentBase(from index: Int, forward: Bool) throws -> Int? {
      let total = view.base?.count ?? 0
      var index = index
      while index >= 0 && index < total {
        var gone = false
        let removed = view.removed
        if removed.count > 0 { gone = try baseKey(index) { removed.contains($0) } }
        if !gone { return index }
        index += forward ? 1 : -1
      }
      return nil
    }

    /// Hands the key after the place to `body` and moves past it.
    mutating func next(_ body: (UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
      let nextBase = try presentBase(from: baseIndex, forward: true)
      let hasAdded = addedIndex < view.added.count
      guard let nextBase else {
        guard hasAdded else { return false }
        baseIndex = view.base?.count ?? 0
        addedIndex += 1
        return try view.added.key(atRank: addedIndex - 1).withUnsafeBytes(body)
      }
      if hasAdded {
        let added = view.added.key(atRank: addedIndex)
        let addedFirst = try baseKey(nextBase) { base in added.withUnsafeBytes { SortedKeyOrder.compare($0, base) < 0 }
        }
        if addedFirst {
          baseIndex = nextBase
          addedIndex += 1
          return try added.withUnsafeBytes(body)
        }
      }
      baseIndex = nextBase + 1
      return try baseKey(nextBase, body)
    }

    /// Hands the key before the place to `body` and moves before it.
    mutating func previous(_ body: (UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
      let previousBase = try presentBase(from: baseIndex - 1, forward: false)
      let hasAdded = addedIndex > 0
      guard let previousBase else {
        guard hasAdded else { return false }
        baseIndex = 0
        addedIndex -= 1
        return try view.added.key(atRank: addedIndex).withUnsafeBytes(body)
      }
      if hasAdded {
        let added = view.added.key(atRank: addedIndex - 1)
        let addedLast = try baseKey(previousBase) { base in
          added.withUnsafeBytes { SortedKeyOrder.compare($0, base) > 0 }
        }
        if addedLast {
          baseIndex = previousBase + 1
          addedIndex -= 1
          return try added.withUnsafeBytes(body)
        }
      }
      baseIndex = previousBase
      return try baseKey(previousBase, body)
    }
  }
}

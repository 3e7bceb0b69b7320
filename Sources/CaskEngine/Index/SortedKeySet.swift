/// A set of keys in byte order, in chunks of at most `chunkLimit` keys, with the number of
/// keys before each chunk: an insert or a removal moves at most a chunk's keys, and a key is
/// found by its rank in O(log n). What changed in a sorted group since its checkpoint
/// (`SortedGroupChanges`); copied on write like any array.
struct SortedKeySet: Sendable, Equatable {
  static let chunkLimit = 256

  private var chunks: [[[UInt8]]] = []
  /// `starts[c]`: the keys before chunk `c`.
  private var starts: [Int] = []
  private(set) var count = 0

  init() {}

  /// The chunk a key at or after `key` would be in: the first whose last key is not before it.
  private func chunk(for key: UnsafeRawBufferPointer) -> Int {
    var low = 0
    var high = chunks.count
    while low < high {
      let middle = (low + high) / 2
      if chunks[middle][chunks[middle].count - 1].withUnsafeBytes({ SortedKeyOrder.compare($0, key) < 0 }) {
        low = middle + 1
      } else {
        high = middle
      }
    }
    return low
  }

  private static func lowerBound(_ keys: [[UInt8]], _ key: UnsafeRawBufferPointer) -> Int {
    var low = 0
    var high = keys.count
    while low < high {
      let middle = (low + high) / 2
      if keys[middle].withUnsafeBytes({ SortedKeyOrder.compare($0, key) < 0 }) {
        low = middle + 1
      } else {
        high = middle
      }
    }
    return low
  }

  /// The number of keys before `bound`.
  func rank(of bound: UnsafeRawBufferPointer) -> Int {
    let position = chunk(for: bound)
    guard position < chunks.count else { return count }
    return starts[position] + Self.lowerBound(chunks[position], bound)
  }

  func contains(_ key: UnsafeRawBufferPointer) -> Bool {
    let position = chunk(for: key)
    guard position < chunks.count else { return false }
    let index = Self.lowerBound(chunks[position], key)
    return index < chunks[position].count
      && chunks[position][index].withUnsafeBytes { SortedKeyOrder.compare($0, key) == 0 }
  }

  /// The key at `rank` (below `count`).
  func key(atRank rank: Int) -> [UInt8] {
    var low = 0
    var high = chunks.count - 1
    while low < high {
      let middle = (low + high + 1) / 2
      if starts[middle] <= rank { low = middle } else { high = middle - 1 }
    }
    return chunks[low][rank - starts[low]]
  }

  /// Adds `key`; `false` when it was there.
  @discardableResult
  mutating func insert(_ key: UnsafeRawBufferPointer) -> Bool {
    var position = chunk(for: key)
    if position == chunks.count {
      if position == 0 || chunks[position - 1].count >= Self.chunkLimit {
        chunks.append([Array(key)])
        starts.append(count)
        count += 1
        return true
      }
      position -= 1
    }
    let index = Self.lowerBound(chunks[position], key)
    if index < chunks[position].count, chunks[position][index].withUnsafeBytes({ SortedKeyOrder.compare($0, key) == 0 })
    {
      return false
    }
    chunks[position].insert(Array(key), at: index)
    count += 1
    if chunks[position].count > Self.chunkLimit {
      let upper = Array(chunks[position][(Self.chunkLimit / 2)...])
      chunks[position].removeSubrange((Self.chunkLimit / 2)...)
      chunks.insert(upper, at: position + 1)
      starts.insert(0, at: position + 1)
    }
    for later in (position + 1)..<chunks.count { starts[later] = starts[later - 1] + chunks[later - 1].count }
    return true
  }

  /// Removes `key`; `false` when it was not there.
  @discardableResult
  mutating func remove(_ key: UnsafeRawBufferPointer) -> Bool {
    let position = chunk(for: key)
    guard position < chunks.count else { return false }
    let index = Self.lowerBound(chunks[position], key)
    guard index < chunks[position].count,
      chunks[position][index].withUnsafeBytes({ SortedKeyOrder.compare($0, key) == 0 })
    else { return false }
    chunks[position].remove(at: index)
    count -= 1
    if chunks[position].isEmpty {
      chunks.remove(at: position)
      starts.remove(at: position)
    }
    if !starts.isEmpty { starts[0] = 0 }
    for later in max(1, position)..<max(1, chunks.count) { starts[later] = starts[later - 1] + chunks[later - 1].count }
    return true
  }

  /// Bytes of the keys held, for the memory figures.
  var keyBytes: Int { chunks.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } } }
}

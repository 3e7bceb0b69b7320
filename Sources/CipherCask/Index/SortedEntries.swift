#if canImport(Glibc)
  import Glibc
#endif

/// Whether `a` sorts before `b` by their UTF-8 bytes, as the store sorts keys.
@inline(__always)
func bytesPrecede<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Bool {
  compareBytes(a, b) < 0
}

/// -1, 0 or 1 as `a` sorts before, equal to or after `b` by their UTF-8 bytes.
func compareBytes<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Int {
  let fast = a.utf8.withContiguousStorageIfAvailable { left in
    b.utf8.withContiguousStorageIfAvailable { right -> Int in
      let common = min(left.count, right.count)
      if common > 0 {
        let result = memcmp(left.baseAddress!, right.baseAddress!, common)
        if result != 0 { return result < 0 ? -1 : 1 }
      }
      return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
    }
  }
  if let fast, let result = fast { return result }
  if a.utf8.elementsEqual(b.utf8) { return 0 }
  return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
}

/// A sorted set of strings (ordered by UTF-8 bytes) in chunks of at most `maximumChunk`, so
/// that an insert or removal moves at most one chunk's elements, and a position is found by two
/// binary searches.
///
/// - Complexity: insert, remove, `lowerBound`: O(log n + c) for chunks of c elements; `rank`:
///   O(n / c).
struct SortedEntries: Sendable {
  static let maximumChunk = 1024
  private(set) var chunks: [[String]] = []
  private(set) var count = 0

  init() {}

  /// From strings already sorted and distinct.
  init(sorted: [String]) {
    let size = Self.maximumChunk / 2
    var start = 0
    while start < sorted.count {
      let end = min(sorted.count, start + size)
      chunks.append(Array(sorted[start..<end]))
      start = end
    }
    count = sorted.count
  }

  /// A place in the set: chunk and index within it.
  struct Position: Equatable, Sendable {
    var chunk: Int
    var index: Int
  }

  var startPosition: Position { Position(chunk: 0, index: 0) }
  var endPosition: Position { Position(chunk: chunks.count, index: 0) }

  /// The first chunk whose last element is not before `key` (`chunks.count` if none).
  private func chunkIndex(for key: String) -> Int {
    var low = 0
    var high = chunks.count
    while low < high {
      let middle = (low + high) / 2
      if bytesPrecede(chunks[middle][chunks[middle].count - 1], key) { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// The position of the first element not before `key`.
  func lowerBound(_ key: String) -> Position {
    let chunk = chunkIndex(for: key)
    guard chunk < chunks.count else { return endPosition }
    let elements = chunks[chunk]
    var low = 0
    var high = elements.count
    while low < high {
      let middle = (low + high) / 2
      if bytesPrecede(elements[middle], key) { low = middle + 1 } else { high = middle }
    }
    return Position(chunk: chunk, index: low)
  }

  func element(at position: Position) -> String {
    chunks[position.chunk][position.index]
  }

  func position(after position: Position) -> Position {
    if position.index + 1 < chunks[position.chunk].count {
      return Position(chunk: position.chunk, index: position.index + 1)
    }
    return Position(chunk: position.chunk + 1, index: 0)
  }

  /// The position before `position`, or `nil` at the start.
  func position(before position: Position) -> Position? {
    if position.index > 0 { return Position(chunk: position.chunk, index: position.index - 1) }
    guard position.chunk > 0 else { return nil }
    return Position(chunk: position.chunk - 1, index: chunks[position.chunk - 1].count - 1)
  }

  /// The position with `rank` elements before it (`endPosition` when `rank` is `count`).
  ///
  /// - Complexity: O(n / c) for chunks of c elements.
  func position(atRank rank: Int) -> Position {
    var left = rank
    for chunk in chunks.indices {
      if left < chunks[chunk].count { return Position(chunk: chunk, index: left) }
      left -= chunks[chunk].count
    }
    return endPosition
  }

  /// How many elements precede `position`.
  func rank(of position: Position) -> Int {
    var total = position.index
    for chunk in 0..<min(position.chunk, chunks.count) { total += chunks[chunk].count }
    return total
  }

  func contains(_ key: String) -> Bool {
    let position = lowerBound(key)
    return position != endPosition && compareBytes(element(at: position), key) == 0
  }

  /// Inserts `key`; returns false if it was there.
  @discardableResult
  mutating func insert(_ key: String) -> Bool {
    if chunks.isEmpty {
      chunks = [[key]]
      count = 1
      return true
    }
    var chunk = chunkIndex(for: key)
    if chunk == chunks.count { chunk -= 1 }
    var low = 0
    var high = chunks[chunk].count
    while low < high {
      let middle = (low + high) / 2
      if bytesPrecede(chunks[chunk][middle], key) { low = middle + 1 } else { high = middle }
    }
    if low < chunks[chunk].count, compareBytes(chunks[chunk][low], key) == 0 { return false }
    chunks[chunk].insert(key, at: low)
    count += 1
    if chunks[chunk].count > Self.maximumChunk {
      let half = chunks[chunk].count / 2
      let upper = Array(chunks[chunk][half...])
      chunks[chunk].removeSubrange(half...)
      chunks.insert(upper, at: chunk + 1)
    }
    return true
  }

  /// Removes `key`; returns false if it was not there.
  @discardableResult
  mutating func remove(_ key: String) -> Bool {
    let position = lowerBound(key)
    guard position != endPosition, compareBytes(element(at: position), key) == 0 else { return false }
    chunks[position.chunk].remove(at: position.index)
    if chunks[position.chunk].isEmpty { chunks.remove(at: position.chunk) }
    count -= 1
    return true
  }
}

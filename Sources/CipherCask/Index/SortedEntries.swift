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
      compareRaw(UnsafeRawBufferPointer(left), UnsafeRawBufferPointer(right))
    }
  }
  if let fast, let result = fast { return result }
  if a.utf8.elementsEqual(b.utf8) { return 0 }
  return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
}

/// Calls `body` with the UTF-8 bytes of `string` (no copy when it is native).
@inline(__always)
func withUTF8Bytes<S: StringProtocol, R>(_ string: S, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
  if let result = try string.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
    return result
  }
  var copy = String(string)
  return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
}

/// A sorted set of byte strings (in the store's key order) in packed chunks of at most
/// `maximumChunk` elements, so that an insert or removal moves at most one chunk's bytes, and
/// a position is found by two binary searches.
///
/// - Complexity: insert, remove, `lowerBound`: O(log n + c) for chunks of c elements; `rank`:
///   O(n / c), over one array of counts.
struct SortedEntries: Sendable {
  /// Small, so that an insert under the writer lock moves little: the bytes and ends after the
  /// new element are moved and shifted, and with chunks of up to 1,024 elements that was most
  /// of keeping an index's entries on a save. What more chunks cost, a rank summing their
  /// counts, reads `counts` side by side rather than each chunk's own arrays.
  static let maximumChunk = 128
  /// A chunk over this many bytes is split even with fewer elements (long entries), so that
  /// an insert never moves much more than this.
  static let maximumChunkBytes = 64 * 1024
  private(set) var chunks: [EntryChunk] = []
  /// The first 8 bytes of each chunk's last element (`bigEndian`, zero-padded), side by side:
  /// the search for a chunk compares these and reads a chunk's own bytes only on a tie.
  /// Prevents: a cache miss or two per step of that search (each chunk's arrays are
  /// allocations of their own), the largest share of an insert into an index of many entries.
  private var lastPrefixes: [UInt64] = []
  /// Each chunk's element count, side by side: what `rank` and `position(atRank:)` sum.
  private var counts: [Int] = []
  private(set) var count = 0

  init() {}

  /// From `ranges` of `source`, already sorted (`sortRanges`) and distinct.
  init(_ source: UnsafeRawBufferPointer, sortedRanges ranges: [Range<Int>]) {
    let size = Self.maximumChunk / 2
    var start = 0
    chunks.reserveCapacity(ranges.count / size + 1)
    while start < ranges.count {
      var end = start
      var bytes = 0
      while end < ranges.count, end - start < size, end == start || bytes < Self.maximumChunkBytes / 2 {
        bytes += ranges[end].count
        end += 1
      }
      chunks.append(EntryChunk(source, ranges: ranges[start..<end]))
      start = end
    }
    count = ranges.count
    lastPrefixes.reserveCapacity(chunks.count)
    for chunk in chunks.indices { lastPrefixes.append(lastPrefix(of: chunk)) }
    counts = chunks.map(\.count)
  }

  /// The fence prefix of chunk `index` (`lastPrefixes`).
  private func lastPrefix(of index: Int) -> UInt64 {
    chunks[index].withElement(chunks[index].count - 1) { Self.bigEndian($0, from: 0) }
  }

  /// Sorts `ranges` of `source` by their bytes. Each range's first 16 bytes are compared as
  /// two integers (what tells most entries apart: 16 digits of a number or a date, a hash, or
  /// a short text and the id's start), ties by `memcmp`: a sort of strings cost most of
  /// building a large index.
  ///
  /// - Complexity: O(m log m) for m ranges.
  static func sortRanges(_ ranges: [Range<Int>], of source: UnsafeRawBufferPointer) -> [Range<Int>] {
    typealias Keyed = (high: UInt64, low: UInt64, range: Range<Int>)
    var keyed: [Keyed] = []
    keyed.reserveCapacity(ranges.count)
    for range in ranges {
      let bytes = UnsafeRawBufferPointer(rebasing: source[range])
      keyed.append((bigEndian(bytes, from: 0), bigEndian(bytes, from: 8), range))
    }
    keyed.sort { a, b in
      if a.high != b.high { return a.high < b.high }
      if a.low != b.low { return a.low < b.low }
      return compareRaw(
        UnsafeRawBufferPointer(rebasing: source[a.range]), UnsafeRawBufferPointer(rebasing: source[b.range])) < 0
    }
    return keyed.map(\.range)
  }

  /// Bytes `start ..< start + 8` as a big-endian integer, zero-padded: ordered as the bytes
  /// are, ties left to a full comparison.
  private static func bigEndian(_ bytes: UnsafeRawBufferPointer, from start: Int) -> UInt64 {
    if bytes.count >= start + 8 {
      return UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self))
    }
    var value: UInt64 = 0
    for index in start..<(start + 8) {
      value = value << 8 | UInt64(index < bytes.count ? bytes[index] : 0)
    }
    return value
  }

  /// A place in the set: chunk and index within it.
  struct Position: Equatable, Sendable {
    var chunk: Int
    var index: Int
  }

  var startPosition: Position { Position(chunk: 0, index: 0) }
  var endPosition: Position { Position(chunk: chunks.count, index: 0) }

  /// The first chunk whose last element is not before `key` (`chunks.count` if none).
  private func chunkIndex(for key: UnsafeRawBufferPointer) -> Int {
    // Padded prefixes that differ order their byte strings the same way: at the first byte
    // they differ in, a missing byte reads as 0 and is below any byte a longer string has.
    let prefix = Self.bigEndian(key, from: 0)
    return lastPrefixes.withUnsafeBufferPointer { fences in
      var low = 0
      var high = fences.count
      while low < high {
        let middle = (low + high) / 2
        let before =
          fences[middle] != prefix
          ? fences[middle] < prefix : chunks[middle].compare(chunks[middle].count - 1, key) < 0
        if before { low = middle + 1 } else { high = middle }
      }
      return low
    }
  }

  /// The position of the first element not before `key`.
  func lowerBound(_ key: UnsafeRawBufferPointer) -> Position {
    let chunk = chunkIndex(for: key)
    guard chunk < chunks.count else { return endPosition }
    return Position(chunk: chunk, index: chunks[chunk].lowerBound(key))
  }

  func lowerBound(_ key: String) -> Position {
    withUTF8Bytes(key) { lowerBound($0) }
  }

  /// Calls `body` with the bytes of the element at `position` (not `endPosition`).
  @inline(__always)
  func withElement<R>(at position: Position, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try chunks[position.chunk].withElement(position.index, body)
  }

  func element(at position: Position) -> [UInt8] {
    chunks[position.chunk].element(position.index)
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

  /// Calls `body` with the elements from `start` up to (not including) `end`, in order (the
  /// reverse with `descending`), until it returns false: a chunk at a time, each chunk's
  /// arrays opened once.
  func walk(
    from start: Position, to end: Position, descending: Bool, _ body: (UnsafeRawBufferPointer) throws -> Bool
  ) rethrows {
    guard start.chunk < chunks.count else { return }
    let last = min(end.chunk, chunks.count - 1)
    guard start.chunk <= last else { return }
    // The part of chunk `chunk` inside the range.
    func indices(_ chunk: Int) -> Range<Int> {
      let lower = chunk == start.chunk ? start.index : 0
      let upper = chunk == end.chunk ? end.index : chunks[chunk].count
      return lower..<max(lower, upper)
    }
    for step in 0...(last - start.chunk) {
      let chunk = descending ? last - step : start.chunk + step
      guard try chunks[chunk].withElements(indices(chunk), descending: descending, body) else { return }
    }
  }

  /// The position with `rank` elements before it (`endPosition` when `rank` is `count`).
  ///
  /// - Complexity: O(n / c) for chunks of c elements.
  func position(atRank rank: Int) -> Position {
    counts.withUnsafeBufferPointer { counts in
      var left = rank
      for chunk in counts.indices {
        if left < counts[chunk] { return Position(chunk: chunk, index: left) }
        left -= counts[chunk]
      }
      return endPosition
    }
  }

  /// How many elements precede `position`.
  func rank(of position: Position) -> Int {
    counts.withUnsafeBufferPointer { counts in
      var total = position.index
      for chunk in 0..<min(position.chunk, counts.count) { total += counts[chunk] }
      return total
    }
  }

  func contains(_ key: UnsafeRawBufferPointer) -> Bool {
    let position = lowerBound(key)
    return position != endPosition && withElement(at: position) { compareRaw($0, key) == 0 }
  }

  /// Calls `body` with every element, in order.
  func forEach(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
    for chunk in chunks {
      for index in 0..<chunk.count { try chunk.withElement(index, body) }
    }
  }

  /// Whether both hold the same elements (however they are split into chunks).
  func elementsEqual(_ other: SortedEntries) -> Bool {
    guard count == other.count else { return false }
    var position = other.startPosition
    var equal = true
    forEach { element in
      guard equal else { return }
      equal = other.withElement(at: position) { compareRaw($0, element) == 0 }
      position = other.position(after: position)
    }
    return equal
  }

  /// Inserts `key`; returns false if it was there.
  @discardableResult
  mutating func insert(_ key: UnsafeRawBufferPointer) -> Bool {
    if chunks.isEmpty {
      var chunk = EntryChunk()
      chunk.insert(key, at: 0)
      chunks = [chunk]
      lastPrefixes = [lastPrefix(of: 0)]
      counts = [1]
      count = 1
      return true
    }
    var chunk = chunkIndex(for: key)
    if chunk == chunks.count { chunk -= 1 }
    let index = chunks[chunk].lowerBound(key)
    if index < chunks[chunk].count, chunks[chunk].compare(index, key) == 0 { return false }
    chunks[chunk].insert(key, at: index)
    count += 1
    counts[chunk] += 1
    if chunks[chunk].count > Self.maximumChunk
      || (chunks[chunk].count > 1 && chunks[chunk].bytes.count > Self.maximumChunkBytes)
    {
      let upper = chunks[chunk].splitOff()
      chunks.insert(upper, at: chunk + 1)
      lastPrefixes.insert(lastPrefix(of: chunk + 1), at: chunk + 1)
      counts[chunk] = chunks[chunk].count
      counts.insert(upper.count, at: chunk + 1)
    }
    lastPrefixes[chunk] = lastPrefix(of: chunk)
    return true
  }

  /// Removes `key`; returns false if it was not there.
  @discardableResult
  mutating func remove(_ key: UnsafeRawBufferPointer) -> Bool {
    let position = lowerBound(key)
    guard position != endPosition, withElement(at: position, { compareRaw($0, key) == 0 }) else { return false }
    chunks[position.chunk].remove(at: position.index)
    if chunks[position.chunk].count == 0 {
      chunks.remove(at: position.chunk)
      lastPrefixes.remove(at: position.chunk)
      counts.remove(at: position.chunk)
    } else {
      lastPrefixes[position.chunk] = lastPrefix(of: position.chunk)
      counts[position.chunk] -= 1
    }
    count -= 1
    return true
  }
}

#if canImport(Glibc)
  import Glibc
#endif

/// -1, 0 or 1 as `a` sorts before, equal to or after `b`, byte by byte (a prefix first).
@inline(__always)
func compareRaw(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
  // The first 8 bytes as one big-endian integer decide most comparisons (a hash in the by-id
  // order, a date's or a name's start in key order) without a call to memcmp.
  if a.count >= 8, b.count >= 8 {
    let left = UInt64(bigEndian: a.loadUnaligned(as: UInt64.self))
    let right = UInt64(bigEndian: b.loadUnaligned(as: UInt64.self))
    if left != right { return left < right ? -1 : 1 }
  }
  let common = min(a.count, b.count)
  if common > 0, let left = a.baseAddress, let right = b.baseAddress {
    let result = memcmp(left, right, common)
    if result != 0 { return result < 0 ? -1 : 1 }
  }
  return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

/// A run of distinct byte strings in order, packed back to back in one array: one allocation
/// per chunk rather than one `String` per element, which is what made building the entries of
/// a large index slow and large.
struct EntryChunk: Sendable {
  /// The elements' bytes, one after another.
  private(set) var bytes: [UInt8] = []
  /// Where each element ends in `bytes`; element `i` starts where element `i - 1` ends.
  private(set) var ends: [UInt32] = []

  init() {}

  /// From `ranges` of `source`, already in order and distinct.
  init(_ source: UnsafeRawBufferPointer, ranges: ArraySlice<Range<Int>>) {
    var total = 0
    for range in ranges { total += range.count }
    bytes.reserveCapacity(total)
    ends.reserveCapacity(ranges.count)
    for range in ranges {
      bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: source[range]))
      ends.append(UInt32(bytes.count))
    }
  }

  var count: Int { ends.count }

  func range(of index: Int) -> Range<Int> {
    (index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index])
  }

  /// Calls `body` with the bytes of element `index`.
  @inline(__always)
  func withElement<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    let range = range(of: index)
    return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
  }

  /// Calls `body` with the bytes of the elements at `indices`, in order (the reverse with
  /// `descending`), until it returns false; returns whether it never did. The arrays are
  /// opened once for the run. Prevents: a retain and a release of them per element.
  func withElements(
    _ indices: Range<Int>, descending: Bool, _ body: (UnsafeRawBufferPointer) throws -> Bool
  ) rethrows -> Bool {
    try bytes.withUnsafeBytes { all in
      try ends.withUnsafeBufferPointer { ends in
        func visit(_ index: Int) throws -> Bool {
          let start = index == 0 ? 0 : Int(ends[index - 1])
          return try body(UnsafeRawBufferPointer(rebasing: all[start..<Int(ends[index])]))
        }
        if descending {
          for index in indices.reversed() where try !visit(index) { return false }
        } else {
          for index in indices where try !visit(index) { return false }
        }
        return true
      }
    }
  }

  func element(_ index: Int) -> [UInt8] {
    Array(bytes[range(of: index)])
  }

  /// -1, 0 or 1 as element `index` sorts before, equal to or after `key`.
  func compare(_ index: Int, _ key: UnsafeRawBufferPointer) -> Int {
    withElement(index) { compareRaw($0, key) }
  }

  /// The index of the first element not before `key` (`count` if none).
  func lowerBound(_ key: UnsafeRawBufferPointer) -> Int {
    bytes.withUnsafeBytes { all in
      var low = 0
      var high = ends.count
      while low < high {
        let middle = (low + high) / 2
        let range = range(of: middle)
        if compareRaw(UnsafeRawBufferPointer(rebasing: all[range]), key) < 0 { low = middle + 1 } else { high = middle }
      }
      return low
    }
  }

  /// Puts `key` at `index` (the caller keeps the order).
  ///
  /// - Complexity: O(c) for c elements, as two `memmove`s and one pass over the ends (an
  ///   element-wise insert of the bytes cost a save more than the rest of keeping its entries).
  mutating func insert(_ key: UnsafeRawBufferPointer, at index: Int) {
    let start = index == 0 ? 0 : Int(ends[index - 1])
    let oldCount = bytes.count
    bytes.append(contentsOf: key)
    if start < oldCount, let source = key.baseAddress {
      bytes.withUnsafeMutableBytes { buffer in
        guard let base = buffer.baseAddress else { return }
        memmove(base + start + key.count, base + start, oldCount - start)
        memcpy(base + start, source, key.count)
      }
    }
    let length = UInt32(key.count)
    ends.insert(UInt32(start) &+ length, at: index)
    Self.shift(&ends, from: index + 1, by: length)
  }

  mutating func remove(at index: Int) {
    let range = range(of: index)
    bytes.removeSubrange(range)
    ends.remove(at: index)
    Self.shift(&ends, from: index, by: 0 &- UInt32(range.count))
  }

  /// Adds `delta` (wrapping: a removal adds its negation) to the ends from `start` on.
  private static func shift(_ ends: inout [UInt32], from start: Int, by delta: UInt32) {
    ends.withUnsafeMutableBufferPointer { ends in
      guard start < ends.count else { return }
      for index in start..<ends.count { ends[index] &+= delta }
    }
  }

  /// Moves the upper half of the elements into a new chunk, returned.
  mutating func splitOff() -> EntryChunk {
    let half = ends.count / 2
    let cut = Int(ends[half - 1])
    var upper = EntryChunk()
    upper.bytes = Array(bytes[cut...])
    upper.ends = ends[half...].map { $0 - UInt32(cut) }
    bytes.removeSubrange(cut...)
    ends.removeSubrange(half...)
    return upper
  }
}

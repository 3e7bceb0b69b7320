#if canImport(Glibc)
  import Glibc
#endif

/// The keys of one sorted page of a checkpoint (Docs/FORMAT.md, section 18), decoded: each key
/// is the part after the group's name and U+0000, in byte order. Immutable once made, so that
/// the page cache hands the same page to any number of readers.
final class SortedPage: Sendable {
  /// The keys' bytes back to back.
  let bytes: [UInt8]
  /// Where each key ends in `bytes`.
  let ends: [Int32]

  init(bytes: [UInt8], ends: [Int32]) {
    self.bytes = bytes
    self.ends = ends
  }

  var count: Int { ends.count }

  /// What the page costs in memory, as the cache counts it.
  var memoryCost: Int { bytes.count + ends.count * MemoryLayout<Int32>.size + 64 }

  /// Calls `body` with key `index`'s bytes.
  func withKey<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    let start = index == 0 ? 0 : Int(ends[index - 1])
    let end = Int(ends[index])
    return try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
  }

  /// The number of keys before `bound` (all of them when none is at or after it).
  func lowerBound(_ bound: UnsafeRawBufferPointer) -> Int {
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if withKey(middle, { SortedKeyOrder.compare($0, bound) < 0 }) { low = middle + 1 } else { high = middle }
    }
    return low
  }
}

/// Byte order of keys, as `memcmp` gives it, the shorter first on a tie.
enum SortedKeyOrder {
  static func compare(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Int {
    let common = min(left.count, right.count)
    if common > 0 {
      let result = memcmp(left.baseAddress!, right.baseAddress!, common)
      if result != 0 { return result < 0 ? -1 : 1 }
    }
    return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
  }

  static func compare(_ left: [UInt8], _ right: [UInt8]) -> Int {
    left.withUnsafeBytes { left in right.withUnsafeBytes { compare(left, $0) } }
  }
}

/// The contents of sorted pages: each key as the bytes it shares with the key before it in
/// the page (2), the length of the rest (2), and the rest; the first key of a page shares none.
enum SortedKeyPages {
  /// Splits keys, given in strictly increasing byte order, into page contents of about
  /// `target` bytes each.
  struct Builder {
    private(set) var pages: [(contents: [UInt8], count: Int, firstKey: [UInt8])] = []
    private var current = ByteWriter()
    private var count = 0
    private var firstKey: [UInt8] = []
    private var previous: [UInt8] = []
    /// Where a page is closed: `CaskFormat.checkpointSortedPageTarget` but in the fuzz seeds,
    /// whose sorted groups span several pages with a handful of keys.
    private let target: Int

    init(target: Int = CaskFormat.checkpointSortedPageTarget) {
      self.target = target
    }

    mutating func append(_ key: UnsafeRawBufferPointer) {
      if count > 0,
        current.bytes.count + CaskFormat.checkpointSortedKeyHeadLength + key.count
          > target
      {
        close()
      }
      var shared = 0
      if count > 0 {
        let limit = min(previous.count, key.count, Int(UInt16.max))
        while shared < limit, previous[shared] == key[shared] { shared += 1 }
      } else {
        firstKey = Array(key)
      }
      current.append(UInt16(shared))
      current.append(UInt16(key.count - shared))
      current.append(contentsOf: UnsafeRawBufferPointer(rebasing: key[shared...]))
      previous = Array(key)
      count += 1
    }

    /// Closes the last page; returns every page.
    mutating func finish() -> [(contents: [UInt8], count: Int, firstKey: [UInt8])] {
      close()
      return pages
    }

    private mutating func close() {
      guard count > 0 else { return }
      pages.append((current.bytes, count, firstKey))
      current = ByteWriter()
      count = 0
    }
  }

  /// Decodes a page's contents holding `count` keys, the first `firstKey`, each after the one
  /// before and the last before `nextFirstKey` (the next page's first key, `nil` for the last
  /// page).
  ///
  /// - Returns: `nil` unless the contents are exactly so.
  static func decode(
    _ contents: UnsafeRawBufferPointer, count: Int, firstKey: [UInt8], nextFirstKey: [UInt8]?
  ) -> SortedPage? {
    var reader = ByteReader(contents)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(contents.count * 2)
    var ends: [Int32] = []
    ends.reserveCapacity(count)
    var previousStart = 0
    for index in 0..<count {
      guard let shared = reader.readUInt16().map(Int.init), let restLength = reader.readUInt16().map(Int.init),
        let rest = reader.readBytes(restLength)
      else { return nil }
      let previousLength = bytes.count - previousStart
      guard index > 0 || shared == 0, shared <= previousLength, shared + restLength > 0,
        shared + restLength <= CaskFormat.maximumKeyLength
      else { return nil }
      let start = bytes.count
      // Byte by byte: appending a slice of `bytes` to itself would copy the whole array
      // (the slice shares its buffer), once per key.
      for index in previousStart..<previousStart + shared { bytes.append(bytes[index]) }
      bytes.append(contentsOf: rest)
      let ordered = bytes.withUnsafeBytes { all -> Bool in
        let key = UnsafeRawBufferPointer(rebasing: all[start...])
        if index == 0 { return firstKey.withUnsafeBytes { SortedKeyOrder.compare($0, key) == 0 } }
        return SortedKeyOrder.compare(UnsafeRawBufferPointer(rebasing: all[previousStart..<start]), key) < 0
      }
      guard ordered else { return nil }
      previousStart = start
      ends.append(Int32(bytes.count))
    }
    guard reader.remaining == 0, count > 0 else { return nil }
    if let nextFirstKey {
      let before = bytes.withUnsafeBytes { all in
        nextFirstKey.withUnsafeBytes {
          SortedKeyOrder.compare(UnsafeRawBufferPointer(rebasing: all[previousStart...]), $0) < 0
        }
      }
      guard before else { return nil }
    }
    return SortedPage(bytes: bytes, ends: ends)
  }
}

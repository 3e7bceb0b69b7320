import CaskEngine
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A string compared and hashed by its UTF-8 bytes, as the store tells keys apart (Swift's
/// `==` takes canonically equivalent strings for one; the store keeps two keys).
struct ByteString: Hashable, Sendable {
  let string: String

  init(_ string: String) { self.string = string }
  init(_ string: Substring) { self.string = String(string) }

  static func == (lhs: ByteString, rhs: ByteString) -> Bool {
    compareBytes(lhs.string, rhs.string) == 0
  }

  func hash(into hasher: inout Hasher) {
    var copy = string
    copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
  }
}

/// The entries of one id: the very strings the sorted entries hold (a reference each, no
/// copy), whose texts are read off when asked for.
enum IDEntries: Sendable {
  case one(String)
  case many([String])

  var entries: [String] {
    switch self {
    case .one(let entry): return [entry]
    case .many(let entries): return entries
    }
  }

  var texts: [Substring] {
    entries.map(Self.text)
  }

  var firstText: Substring? {
    switch self {
    case .one(let entry): return Self.text(of: entry)
    case .many(let entries): return entries.first.map(Self.text)
    }
  }

  private static func text(of entry: String) -> Substring {
    IndexKeys.split(entry: entry)?.text ?? Substring(entry)
  }
}

/// One index's entries in memory: the entries in key order, and each id's texts, so that a
/// write finds the entries to remove without reading the old object.
///
/// Built from the index's group of store keys (no object decoded) and kept current by the
/// store's change observer, which runs under the writer lock after each commit.
struct IndexEntries: Sendable {
  /// `text + U+0000 + id`, in the store's key order.
  private(set) var sorted = SortedEntries()
  /// id -> its entries (one for a plain or unique index).
  private var byID: [ByteString: IDEntries] = [:]

  init() {}

  /// From the entry parts (after the group and U+0000) of the group's keys, sorted by bytes.
  init(sortedEntries: [String]) {
    sorted = SortedEntries(sorted: sortedEntries)
    byID.reserveCapacity(sortedEntries.count)
    for entry in sortedEntries { add(entry) }
  }

  /// From a group's keys as the engine hands them over, each `prefixLength` bytes of group
  /// and U+0000 before its entry. Sorted as bytes before any `String` is made (a sort of
  /// strings cost most of building a large index).
  ///
  /// - Complexity: O(m log m) for m keys.
  init(keys: PackedKeys, prefixLength: Int) {
    // Each entry's first 16 bytes as two integers (an entry's distinctive bytes are rarely
    // further in: 16 digits of a number or a date, or a short text and the id's start).
    typealias Keyed = (high: UInt64, low: UInt64, start: Int, end: Int)
    let entries = keys.bytes.withUnsafeBytes { bytes -> [String] in
      var keyed: [Keyed] = []
      keyed.reserveCapacity(keys.count)
      for key in 0..<keys.count {
        let range = keys.range(of: key)
        guard range.count > prefixLength else { continue }
        let entry = UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + prefixLength)..<range.upperBound])
        keyed.append(
          (
            Self.bigEndian(entry, from: 0), Self.bigEndian(entry, from: 8), range.lowerBound + prefixLength,
            range.upperBound
          ))
      }
      func entry(_ item: Keyed) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[item.start..<item.end])
      }
      keyed.sort { a, b in
        if a.high != b.high { return a.high < b.high }
        if a.low != b.low { return a.low < b.low }
        return Self.compare(entry(a), entry(b)) < 0
      }
      return keyed.map { String(decoding: entry($0), as: UTF8.self) }
    }
    self.init(sortedEntries: entries)
  }

  /// Bytes `start ..< start + 8` as a big-endian integer, zero-padded: ordered as the bytes
  /// are, ties left to a full comparison.
  private static func bigEndian(_ bytes: UnsafeRawBufferPointer, from start: Int) -> UInt64 {
    var value: UInt64 = 0
    for index in start..<(start + 8) {
      value = value << 8 | UInt64(index < bytes.count ? bytes[index] : 0)
    }
    return value
  }

  private static func compare(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let common = min(a.count, b.count)
    if common > 0, let left = a.baseAddress, let right = b.baseAddress {
      let result = memcmp(left, right, common)
      if result != 0 { return result < 0 ? -1 : 1 }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
  }

  var count: Int { sorted.count }

  private mutating func add(_ entry: String) {
    guard let (_, id) = IndexKeys.split(entry: entry) else { return }
    let key = ByteString(id)
    switch byID[key] {
    case nil: byID[key] = .one(entry)
    case .one(let first): byID[key] = .many([first, entry])
    case .many(var entries):
      byID[key] = nil
      entries.append(entry)
      byID[key] = .many(entries)
    }
  }

  mutating func insert(entry: String) {
    guard sorted.insert(entry) else { return }
    add(entry)
  }

  mutating func remove(entry: String) {
    guard sorted.remove(entry), let (_, id) = IndexKeys.split(entry: entry) else { return }
    let key = ByteString(id)
    guard let entries = byID[key] else { return }
    let kept = entries.entries.filter { compareBytes($0, entry) != 0 }
    byID[key] = kept.isEmpty ? nil : (kept.count == 1 ? .one(kept[0]) : .many(kept))
  }

  /// The texts of `id`'s entries.
  func texts(of id: String) -> [String] {
    byID[ByteString(id)]?.texts.map(String.init) ?? []
  }

  /// The texts of `id`'s entries, as slices of the entries (no copy).
  func textSlices(of id: String) -> [Substring] {
    byID[ByteString(id)]?.texts ?? []
  }

  /// The text of `id`'s first entry (its only one in a plain or unique index).
  func firstText(of id: String) -> Substring? {
    byID[ByteString(id)]?.firstText
  }

  /// Calls `body` with every id that has entries and their texts, in no particular order.
  func forEachID(_ body: (String, [Substring]) throws -> Void) rethrows {
    for (id, entries) in byID { try body(id.string, entries.texts) }
  }

  /// The ids whose entries lie in `bounds`, in entry order (an id twice when two of its
  /// elements do).
  ///
  /// - Parameter skipping: entries left out first, counted by rank rather than walked.
  func ids(
    in bounds: EntryBounds, descending: Bool = false, skipping: Int = 0, body: (Substring) throws -> Bool
  ) rethrows {
    var (start, end) = positions(of: bounds)
    if skipping > 0 {
      let first = sorted.rank(of: start)
      let last = sorted.rank(of: end)
      guard last - first > skipping else { return }
      if descending {
        end = sorted.position(atRank: last - skipping)
      } else {
        start = sorted.position(atRank: first + skipping)
      }
    }
    if descending {
      var position = end
      while position != start, let previous = sorted.position(before: position) {
        position = previous
        if let (_, id) = IndexKeys.split(entry: sorted.element(at: position)) {
          guard try body(id) else { return }
        }
      }
      return
    }
    var position = start
    while position != end {
      if let (_, id) = IndexKeys.split(entry: sorted.element(at: position)) {
        guard try body(id) else { return }
      }
      position = sorted.position(after: position)
    }
  }

  /// How many entries lie in `bounds`.
  func count(in bounds: EntryBounds) -> Int {
    let (start, end) = positions(of: bounds)
    return sorted.rank(of: end) - sorted.rank(of: start)
  }

  private func positions(of bounds: EntryBounds) -> (SortedEntries.Position, SortedEntries.Position) {
    let start = bounds.lower.map { sorted.lowerBound($0) } ?? sorted.startPosition
    let end = bounds.upper.map { sorted.lowerBound($0) } ?? sorted.endPosition
    if sorted.rank(of: end) < sorted.rank(of: start) { return (start, start) }
    return (start, end)
  }
}

/// A range of entries: from the first not before `lower` to the last before `upper` (each
/// `nil` for no bound), worked out from a range of texts (Docs/FORMAT.md, "Index entries").
struct EntryBounds: Sendable, Equatable {
  var lower: String?
  var upper: String?

  /// Entries whose text is `text`.
  static func equal(_ text: String) -> EntryBounds {
    EntryBounds(lower: text + "\u{0}", upper: text + "\u{1}")
  }

  /// Entries whose text lies between the bounds.
  static func range(lower: String?, lowerInclusive: Bool, upper: String?, upperInclusive: Bool) -> EntryBounds {
    EntryBounds(
      lower: lower.map { $0 + (lowerInclusive ? "\u{0}" : "\u{1}") },
      upper: upper.map { $0 + (upperInclusive ? "\u{1}" : "\u{0}") })
  }
}

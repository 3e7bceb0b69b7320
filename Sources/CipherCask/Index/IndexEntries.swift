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

/// The texts of one id's entries: slices of the entry strings themselves, so that knowing an
/// id's texts costs no copy of them.
enum EntryTexts: Sendable {
  case one(Substring)
  case many([Substring])

  var slices: [Substring] {
    switch self {
    case .one(let text): return [text]
    case .many(let texts): return texts
    }
  }

  var first: Substring? {
    switch self {
    case .one(let text): return text
    case .many(let texts): return texts.first
    }
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
  /// id -> the texts of its entries (one for a plain or unique index).
  private var byID: [ByteString: EntryTexts] = [:]

  init() {}

  /// From the entry parts (after the group and U+0000) of the group's keys, sorted by bytes.
  init(sortedEntries: [String]) {
    sorted = SortedEntries(sorted: sortedEntries)
    byID.reserveCapacity(sortedEntries.count)
    for entry in sortedEntries { addText(of: entry) }
  }

  /// From a group's keys as the engine hands them over, each `prefixLength` bytes of group
  /// and U+0000 before its entry. Sorted as bytes before any `String` is made (a sort of
  /// strings cost most of building a large index).
  ///
  /// - Complexity: O(m log m) for m keys.
  init(keys: PackedKeys, prefixLength: Int) {
    let order = keys.bytes.withUnsafeBytes { bytes -> [Int] in
      var keyed: [(prefix: UInt64, key: Int)] = []
      keyed.reserveCapacity(keys.count)
      for key in 0..<keys.count {
        let range = keys.range(of: key)
        guard range.count > prefixLength else { continue }
        keyed.append((Self.prefix(UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + prefixLength)...])), key))
      }
      keyed.sort { a, b in
        if a.prefix != b.prefix { return a.prefix < b.prefix }
        let left = keys.range(of: a.key)
        let right = keys.range(of: b.key)
        return Self.compare(
          UnsafeRawBufferPointer(rebasing: bytes[(left.lowerBound + prefixLength)..<left.upperBound]),
          UnsafeRawBufferPointer(rebasing: bytes[(right.lowerBound + prefixLength)..<right.upperBound])) < 0
      }
      return keyed.map(\.key)
    }
    var entries: [String] = []
    entries.reserveCapacity(order.count)
    keys.bytes.withUnsafeBytes { bytes in
      for key in order {
        let range = keys.range(of: key)
        entries.append(
          String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + prefixLength)..<range.upperBound]), as: UTF8.self))
      }
    }
    self.init(sortedEntries: entries)
  }

  /// The first 8 bytes as a big-endian integer, zero-padded: ordered as the bytes are, ties
  /// left to a full comparison.
  private static func prefix(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var value: UInt64 = 0
    for index in 0..<8 {
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

  private mutating func addText(of entry: String) {
    guard let (text, id) = IndexKeys.split(entry: entry) else { return }
    let key = ByteString(id)
    switch byID[key] {
    case nil: byID[key] = .one(text)
    case .one(let first): byID[key] = .many([first, text])
    case .many(var texts):
      byID[key] = nil
      texts.append(text)
      byID[key] = .many(texts)
    }
  }

  mutating func insert(entry: String) {
    guard sorted.insert(entry) else { return }
    addText(of: entry)
  }

  mutating func remove(entry: String) {
    guard sorted.remove(entry), let (text, id) = IndexKeys.split(entry: entry) else { return }
    let key = ByteString(id)
    guard let texts = byID[key] else { return }
    let kept = texts.slices.filter { compareBytes($0, text) != 0 }
    byID[key] = kept.isEmpty ? nil : (kept.count == 1 ? .one(kept[0]) : .many(kept))
  }

  /// The texts of `id`'s entries.
  func texts(of id: String) -> [String] {
    byID[ByteString(id)]?.slices.map(String.init) ?? []
  }

  /// The texts of `id`'s entries, as slices of the entries (no copy).
  func textSlices(of id: String) -> [Substring] {
    byID[ByteString(id)]?.slices ?? []
  }

  /// The text of `id`'s first entry (its only one in a plain or unique index).
  func firstText(of id: String) -> Substring? {
    byID[ByteString(id)]?.first
  }

  /// Calls `body` with every id that has entries and their texts, in no particular order.
  func forEachID(_ body: (String, [Substring]) throws -> Void) rethrows {
    for (id, texts) in byID { try body(id.string, texts.slices) }
  }

  /// The ids whose entries lie in `bounds`, in entry order (an id twice when two of its
  /// elements do).
  func ids(in bounds: EntryBounds, descending: Bool = false, body: (Substring) throws -> Bool) rethrows {
    let (start, end) = positions(of: bounds)
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

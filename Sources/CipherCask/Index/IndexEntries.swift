import Foundation

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

/// One index's entries in memory: the entries in key order, and each id's texts, so that a
/// write finds the entries to remove without reading the old object.
///
/// Built from the index's group of store keys (no object decoded) and kept current by the
/// store's change observer, which runs under the writer lock after each commit.
struct IndexEntries: Sendable {
  /// `text + U+0000 + id`, in the store's key order.
  private(set) var sorted = SortedEntries()
  /// id -> the texts of its entries (one for a plain or unique index).
  private(set) var byID: [ByteString: [String]] = [:]

  init() {}

  /// From the entry parts (after the group and U+0000) of the group's keys, sorted by bytes.
  init(sortedEntries: [String]) {
    sorted = SortedEntries(sorted: sortedEntries)
    byID.reserveCapacity(sortedEntries.count)
    for entry in sortedEntries {
      guard let (text, id) = IndexKeys.split(entry: entry) else { continue }
      byID[ByteString(id), default: []].append(String(text))
    }
  }

  var count: Int { sorted.count }

  mutating func insert(entry: String) {
    guard sorted.insert(entry), let (text, id) = IndexKeys.split(entry: entry) else { return }
    byID[ByteString(id), default: []].append(String(text))
  }

  mutating func remove(entry: String) {
    guard sorted.remove(entry), let (text, id) = IndexKeys.split(entry: entry) else { return }
    let key = ByteString(id)
    guard var texts = byID[key] else { return }
    texts.removeAll { compareBytes($0, String(text)) == 0 }
    byID[key] = texts.isEmpty ? nil : texts
  }

  func texts(of id: String) -> [String] {
    byID[ByteString(id)] ?? []
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

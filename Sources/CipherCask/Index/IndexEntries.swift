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

/// One index's entries in memory: the entries in key order, and the same entries by id, so
/// that a write finds an id's entries to remove without reading the old object.
///
/// Both are packed byte strings (`SortedEntries`), a few allocations per thousand entries:
/// no `String` and no dictionary slot per entry, which is what building them from the keys of
/// a large index used to spend its time on.
///
/// Built from the index's group of store keys (no object decoded) and kept current by the
/// store's change observer, which runs under the writer lock after each commit.
struct IndexEntries: Sendable {
  /// `text + U+0000 + id`, in the store's key order.
  private(set) var sorted = SortedEntries()
  /// `hash(id) + length(id) + id + text` (`EntryIDKey`): an id's entries side by side, found by
  /// the 12 bytes before the id and the id; the length makes the prefix exact, whatever bytes
  /// the id holds (U+0000 included).
  private var byID = SortedEntries()

  init() {}

  /// From the entry parts (after the group and U+0000) of a group's keys, in any order,
  /// distinct.
  init(entries: [String]) {
    var packed: [UInt8] = []
    var ranges: [Range<Int>] = []
    for entry in entries {
      let start = packed.count
      packed.append(contentsOf: entry.utf8)
      ranges.append(start..<packed.count)
    }
    self = packed.withUnsafeBytes { IndexEntries(source: $0, ranges: ranges) }
  }

  /// From a group's keys as the engine hands them over, each `prefixLength` bytes of group
  /// and U+0000 before its entry. Sorted as bytes, and packed, without making a `String`.
  ///
  /// - Complexity: O(m log m) for m keys.
  init(keys: PackedKeys, prefixLength: Int) {
    var ranges: [Range<Int>] = []
    ranges.reserveCapacity(keys.count)
    for key in 0..<keys.count {
      let range = keys.range(of: key)
      guard range.count > prefixLength else { continue }
      ranges.append((range.lowerBound + prefixLength)..<range.upperBound)
    }
    self = keys.bytes.withUnsafeBytes { IndexEntries(source: $0, ranges: ranges) }
  }

  /// From distinct entries at `ranges` of `source`, in any order.
  private init(source: UnsafeRawBufferPointer, ranges: [Range<Int>]) {
    sorted = SortedEntries(source, sortedRanges: SortedEntries.sortRanges(ranges, of: source))
    var total = 0
    for range in ranges { total += range.count }
    var keyed: [UInt8] = []
    keyed.reserveCapacity(total + EntryIDKey.headerLength * ranges.count)
    var keyedRanges: [Range<Int>] = []
    keyedRanges.reserveCapacity(ranges.count)
    for range in ranges {
      let entry = UnsafeRawBufferPointer(rebasing: source[range])
      guard let (text, id) = EntryIDKey.split(entry: entry) else { continue }
      let start = keyed.count
      EntryIDKey.append(text: text, id: id, to: &keyed)
      keyedRanges.append(start..<keyed.count)
    }
    byID = keyed.withUnsafeBytes { keyed in
      SortedEntries(keyed, sortedRanges: SortedEntries.sortRanges(keyedRanges, of: keyed))
    }
  }

  var count: Int { sorted.count }

  mutating func insert<S: StringProtocol>(entry: S) {
    _ = withUTF8Bytes(entry) { insert(entryBytes: $0) }
  }

  mutating func remove<S: StringProtocol>(entry: S) {
    _ = withUTF8Bytes(entry) { remove(entryBytes: $0) }
  }

  /// Inserts the entry `text + U+0000 + id` given as its UTF-8 bytes; returns false if it
  /// was there.
  @discardableResult
  mutating func insert(entryBytes entry: UnsafeRawBufferPointer) -> Bool {
    guard sorted.insert(entry) else { return false }
    if let (text, id) = EntryIDKey.split(entry: entry) {
      EntryIDKey.withKey(text: text, id: id) { _ = byID.insert($0) }
    }
    return true
  }

  /// Removes the entry `text + U+0000 + id` given as its UTF-8 bytes; returns false if it
  /// was not there.
  @discardableResult
  mutating func remove(entryBytes entry: UnsafeRawBufferPointer) -> Bool {
    guard sorted.remove(entry) else { return false }
    if let (text, id) = EntryIDKey.split(entry: entry) {
      EntryIDKey.withKey(text: text, id: id) { _ = byID.remove($0) }
    }
    return true
  }

  /// Calls `body` with the text of each of `id`'s entries, in text order, until it returns
  /// false.
  private func walkTexts(of id: String, _ body: (UnsafeRawBufferPointer) -> Bool) {
    withUTF8Bytes(id) { walkTexts(ofID: $0, body) }
  }

  /// `walkTexts(of:_:)` for the id whose UTF-8 bytes are `id`. The key prefix searched for is
  /// made on the stack (`EntryIDKey.withKey`, with no text).
  private func walkTexts(ofID id: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Bool) {
    EntryIDKey.withKey(text: UnsafeRawBufferPointer(start: nil, count: 0), id: id) { prefix in
      var position = byID.lowerBound(prefix)
      while position != byID.endPosition {
        let more = byID.withElement(at: position) { element -> Bool in
          guard element.count >= prefix.count,
            compareRaw(UnsafeRawBufferPointer(rebasing: element[..<prefix.count]), prefix) == 0
          else { return false }
          return body(UnsafeRawBufferPointer(rebasing: element[prefix.count...]))
        }
        guard more else { return }
        position = byID.position(after: position)
      }
    }
  }

  /// Whether one of the texts of the id whose UTF-8 bytes are `id` satisfies `accepts`, given
  /// each text's bytes: `texts(of:)` and a test of each, with no `String` made. What a walk of
  /// a sort index asks of every id it passes.
  ///
  /// - Complexity: O(log n) to find the id's entries, then one test per text until one passes.
  func hasText(ofID id: UnsafeRawBufferPointer, where accepts: (UnsafeRawBufferPointer) -> Bool) -> Bool {
    var found = false
    walkTexts(ofID: id) { text in
      found = accepts(text)
      return !found
    }
    return found
  }

  /// The texts of `id`'s entries.
  func texts(of id: String) -> [String] {
    var texts: [String] = []
    walkTexts(of: id) { text in
      texts.append(String(decoding: text, as: UTF8.self))
      return true
    }
    return texts
  }

  /// The texts of `id`'s entries, as substrings.
  func textSlices(of id: String) -> [Substring] {
    texts(of: id).map { Substring($0) }
  }

  /// The text of `id`'s first entry (its only one in a plain or unique index).
  func firstText(of id: String) -> Substring? {
    var first: Substring?
    walkTexts(of: id) { text in
      first = Substring(String(decoding: text, as: UTF8.self))
      return false
    }
    return first
  }

  /// Calls `body` with every id that has entries and their texts, in no particular order.
  func forEachID(_ body: (String, [Substring]) throws -> Void) rethrows {
    var current: (key: [UInt8], id: String)?
    var texts: [Substring] = []
    var position = byID.startPosition
    while position != byID.endPosition {
      let (key, id, text) = byID.withElement(at: position) { element in
        let parts = EntryIDKey.parts(of: element)
        return (
          Array(UnsafeRawBufferPointer(rebasing: element[..<parts.textStart])),
          String(decoding: parts.id, as: UTF8.self), Substring(String(decoding: parts.text, as: UTF8.self))
        )
      }
      if let previous = current, previous.key != key {
        try body(previous.id, texts)
        texts.removeAll(keepingCapacity: true)
      }
      if current?.key != key { current = (key, id) }
      texts.append(text)
      position = byID.position(after: position)
    }
    if let current { try body(current.id, texts) }
  }

  /// Calls `body` with the text and id of every entry, in entry order.
  func forEachEntry(_ body: (_ text: Substring, _ id: Substring) throws -> Void) rethrows {
    var position = sorted.startPosition
    while position != sorted.endPosition {
      let parts = sorted.withElement(at: position) { element -> (Substring, Substring)? in
        guard let (text, id) = EntryIDKey.split(entry: element) else { return nil }
        return (
          Substring(String(decoding: text, as: UTF8.self)), Substring(String(decoding: id, as: UTF8.self))
        )
      }
      if let (text, id) = parts { try body(text, id) }
      position = sorted.position(after: position)
    }
  }

  /// Whether both hold the same entries.
  func sameEntries(as other: IndexEntries) -> Bool {
    sorted.elementsEqual(other.sorted) && byID.elementsEqual(other.byID)
  }

  /// The ids whose entries lie in `bounds`, in entry order (an id twice when two of its
  /// elements do).
  ///
  /// - Parameter skipping: entries left out first, counted by rank rather than walked.
  func ids(
    in bounds: EntryBounds, descending: Bool = false, skipping: Int = 0, body: (Substring) throws -> Bool
  ) rethrows {
    try idBytes(in: bounds, descending: descending, skipping: skipping) { id in
      try body(Substring(String(decoding: id, as: UTF8.self)))
    }
  }

  /// `ids(in:descending:skipping:body:)` with each id as the UTF-8 bytes it has in its entry,
  /// valid during the call.
  ///
  /// - Complexity: O(log n + n / c) to find the start (a rank over chunks of c entries,
  ///   whatever `skipping` is), then O(1) per entry handed over.
  func idBytes(
    in bounds: EntryBounds, descending: Bool = false, skipping: Int = 0,
    body: (UnsafeRawBufferPointer) throws -> Bool
  ) rethrows {
    try entryBytes(in: bounds, descending: descending, skipping: skipping) { _, id in try body(id) }
  }

  /// `idBytes(in:descending:skipping:body:)` with each entry's text beside its id.
  func entryBytes(
    in bounds: EntryBounds, descending: Bool = false, skipping: Int = 0,
    body: (_ text: UnsafeRawBufferPointer, _ id: UnsafeRawBufferPointer) throws -> Bool
  ) rethrows {
    var (start, end) = positions(of: bounds)
    guard start != end else { return }
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
    try sorted.walk(from: start, to: end, descending: descending) { element in
      // An element without an id (none is written so) is passed over.
      guard let (text, id) = EntryIDKey.split(entry: element) else { return true }
      return try body(text, id)
    }
  }

  /// How many entries lie in `bounds`.
  func count(in bounds: EntryBounds) -> Int {
    let (start, end) = positions(of: bounds)
    return sorted.rank(of: end) - sorted.rank(of: start)
  }

  /// The positions of the first entry in `bounds` and of the first after them.
  func positions(of bounds: EntryBounds) -> (SortedEntries.Position, SortedEntries.Position) {
    let start = bounds.lower.map { sorted.lowerBound($0) } ?? sorted.startPosition
    let end = bounds.upper.map { sorted.lowerBound($0) } ?? sorted.endPosition
    // Positions from `lowerBound` are each element's one (an index within its chunk, or the
    // end): compared as (chunk, index), they are in rank order without summing counts.
    if (end.chunk, end.index) < (start.chunk, start.index) { return (start, start) }
    return (start, end)
  }
}

/// A range of entries: from the first not before `lower` to the last before `upper` (each
/// `nil` for no bound), worked out from a range of texts (Docs/FORMAT.md, "Index entries").
struct EntryBounds: Sendable, Equatable {
  var lower: String?
  var upper: String?

  /// Equal when the bounds' bytes are, as the entries compare them. Prevents: Swift's `==`,
  /// which takes canonically equivalent strings ("é" as one code point and as e + accent) for
  /// one, serving a kept set of one text's ids (`EntriesBox.idSet`) to a query for the other.
  static func == (lhs: EntryBounds, rhs: EntryBounds) -> Bool {
    func same(_ a: String?, _ b: String?) -> Bool {
      switch (a, b) {
      case (nil, nil): return true
      case (let a?, let b?): return compareBytes(a, b) == 0
      default: return false
      }
    }
    return same(lhs.lower, rhs.lower) && same(lhs.upper, rhs.upper)
  }

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

import CaskEngine
import Foundation

/// One index's entries as a query reads them: built in memory (`IndexEntries`), or read in
/// order from the store's sorted view of the index's group (`SortedGroupView`: the
/// checkpoint's sorted pages and what changed since), which costs no build. Both answer the
/// same questions exactly; the view reads an object's own texts from its stored record.
enum IndexSource: Sendable {
  case memory(IndexEntries)
  case view(IndexView)

  /// The number of entries.
  var count: Int {
    switch self {
    case .memory(let entries): entries.count
    case .view(let view): view.entries.count
    }
  }

  /// How many entries lie in `bounds`.
  ///
  /// - Throws: `CaskError.corrupt` when a page of the view fails its checks.
  /// - Complexity: O(log n); for a view, at most two page reads.
  func count(in bounds: EntryBounds) throws -> Int {
    switch self {
    case .memory(let entries): entries.count(in: bounds)
    case .view(let view):
      try view.entries.count(from: bounds.lower.map { Array($0.utf8) }, to: bounds.upper.map { Array($0.utf8) })
    }
  }

  /// The ids whose entries lie in `bounds`, in entry order (the reverse with `descending`),
  /// the first `skipping` entries left out, until `body` returns false.
  func ids(
    in bounds: EntryBounds, descending: Bool = false, skipping: Int = 0, body: (Substring) throws -> Bool
  ) throws {
    try idBytes(in: bounds, descending: descending, skipping: skipping) { id in
      try body(Substring(String(decoding: id, as: UTF8.self)))
    }
  }

  /// `ids(in:descending:skipping:body:)` with each id as the UTF-8 bytes it has in its entry,
  /// valid during the call.
  ///
  /// - Throws: what `body` throws; `CaskError.corrupt` when a page of the view fails its checks.
  /// - Complexity: the skip is a rank, whatever `skipping` is: O(log n + n / c) over the
  ///   counts of the in-memory chunks of c entries, or, for a view, a search of its pages'
  ///   counts and at most a few page reads; then one entry per id handed over.
  func idBytes(
    in bounds: EntryBounds, descending: Bool = false, skipping: Int = 0,
    body: (UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    switch self {
    case .memory(let entries):
      try entries.idBytes(in: bounds, descending: descending, skipping: skipping, body: body)
    case .view:
      try entryBytes(in: bounds, descending: descending, skipping: skipping) { _, id in try body(id) }
    }
  }

  /// `idBytes(in:descending:skipping:body:)` with each entry's text beside its id.
  func entryBytes(
    in bounds: EntryBounds, descending: Bool = false, skipping: Int = 0,
    body: (_ text: UnsafeRawBufferPointer, _ id: UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    switch self {
    case .memory(let entries):
      try entries.entryBytes(in: bounds, descending: descending, skipping: skipping, body: body)
    case .view(let view):
      try view.entries.walk(
        from: bounds.lower.map { Array($0.utf8) }, to: bounds.upper.map { Array($0.utf8) }, descending: descending,
        skipping: skipping
      ) { entry in
        guard let (text, id) = EntryIDKey.split(entry: entry) else { return true }
        return try body(text, id)
      }
    }
  }

  /// The texts of `id`'s entries.
  func texts(of id: String) throws -> [String] {
    switch self {
    case .memory(let entries):
      return entries.texts(of: id)
    case .view(let view):
      // One text once, in entry order, as the entries hold them.
      var texts: [String] = []
      for text in try view.texts(id).sorted(by: bytesPrecede)
      where texts.last.map({ compareBytes($0, text) != 0 }) ?? true {
        texts.append(text)
      }
      return texts
    }
  }

  func textSlices(of id: String) throws -> [Substring] {
    try texts(of: id).map { Substring($0) }
  }

  /// The text of `id`'s first entry (its only one in a plain or unique index).
  func firstText(of id: String) throws -> Substring? {
    try texts(of: id).first.map { Substring($0) }
  }
}

/// An index read through the store's sorted view.
struct IndexView: Sendable {
  /// The group's entries, `text + U+0000 + id`, in order.
  let entries: SortedGroupView
  /// The texts an object has in this index, from its stored record (none when it is not
  /// stored): what its entries are, for an index kept by every write.
  let texts: @Sendable (String) throws -> [String]
}

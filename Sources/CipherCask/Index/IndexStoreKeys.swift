import Foundation

/// The store keys of index entries and catalogues (Docs/FORMAT.md, "Index entries").
///
/// Index keys live in groups whose names begin with U+0001, which no collection name may
/// (`checkName` refuses it), so they never mix with a collection's objects:
///
/// - an entry: `"\u{1}cask.index\u{1}" + index + "\u{1}" + hash + "\u{1}" + collection`, then
///   U+0000, the value's text (`CaskIndexable`), U+0000 and the object's id; its value is empty;
/// - a catalogue: `"\u{1}cask.indexes" + "\u{0}" + collection`, whose value is the JSON of
///   the collection's `IndexCatalog`.
enum IndexStoreKeys {
  static let reservedPrefix: UInt8 = 1
  static let entryGroupPrefix = "\u{1}cask.index\u{1}"
  static let catalogGroup = "\u{1}cask.indexes"
  /// The length of a definition hash in a group name: 64-bit FNV-1a in lower-case hexadecimal.
  static let hashDigits = 16

  /// The group of one index's entries.
  static func group(collection: String, index: String, hash: String) -> String {
    entryGroupPrefix + index + "\u{1}" + hash + "\u{1}" + collection
  }

  /// Whether `group` holds entries of index `index` of `collection`, whatever their hash.
  static func isGroup(_ group: String, ofIndex index: String, collection: String) -> Bool {
    let head = entryGroupPrefix + index + "\u{1}"
    // The hash's digits, then the U+0001 before the collection's name.
    let hashEnd = head.utf8.count + hashDigits
    guard group.utf8.starts(with: head.utf8), group.utf8.count > hashEnd + 1 else { return false }
    let tail = group.utf8.dropFirst(hashEnd + 1)
    return group.utf8.dropFirst(hashEnd).first == reservedPrefix && tail.elementsEqual(collection.utf8)
  }

  static func catalogKey(collection: String) -> String {
    catalogGroup + "\u{0}" + collection
  }

  /// The part of an entry key after its group: `text + U+0000 + id`.
  static func entry(text: String, id: String) -> String {
    text + "\u{0}" + id
  }

  /// The text and id of an entry (the part after its group).
  static func split(entry: String) -> (text: Substring, id: Substring)? {
    guard let zero = entry.utf8.firstIndex(of: 0) else { return nil }
    return (entry[..<zero], entry[entry.utf8.index(after: zero)...])
  }

  /// The part of a store key after the first U+0000, and the part before it.
  static func splitKey(_ key: String) -> (group: Substring, rest: Substring)? {
    guard let zero = key.utf8.firstIndex(of: 0) else { return nil }
    return (key[..<zero], key[key.utf8.index(after: zero)...])
  }
}

/// What a collection's catalogue records of its indexes: the definition of each and whether
/// it is complete. Stored as JSON under `IndexStoreKeys.catalogKey(collection:)`.
struct IndexCatalog: Codable, Sendable, Equatable {
  enum State: String, Codable, Sendable {
    /// Being built: its entries are kept by writes but not yet complete, so queries scan.
    case building
    /// Complete: queries use it.
    case ready
    /// No longer kept by writes (written while not declared): rebuilt when declared again.
    case stale
  }

  struct Entry: Codable, Sendable, Equatable {
    var name: String
    var keyPath: String
    var kind: String
    var valueType: String
    var hash: String
    var state: State
  }

  var indexes: [Entry] = []

  subscript(name: String) -> Entry? {
    indexes.first { $0.name == name }
  }

  mutating func set(_ entry: Entry) {
    if let position = indexes.firstIndex(where: { $0.name == entry.name }) {
      indexes[position] = entry
    } else {
      indexes.append(entry)
    }
  }

  mutating func remove(_ name: String) {
    indexes.removeAll { $0.name == name }
  }

  func encoded() throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return try encoder.encode(self)
  }

  static func decoded(_ data: Data) -> IndexCatalog? {
    try? JSONDecoder().decode(IndexCatalog.self, from: data)
  }
}

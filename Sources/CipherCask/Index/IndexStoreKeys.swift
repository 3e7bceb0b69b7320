import Foundation

#if canImport(Glibc)
  import Glibc
#endif

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

  /// The store key of an entry: `group + U+0000 + text + U+0000 + id`.
  static func entryKey(group: String, text: String, id: String) -> String {
    // The parts' bytes copied once into a string made at its final length. Prevents: five
    // appends to a reserved string, each a call that checks and grows the string again (a
    // twelfth of a save with three indexes).
    let length = group.utf8.count + text.utf8.count + id.utf8.count + 2
    var group = group
    var text = text
    var id = id
    return group.withUTF8 { group in
      text.withUTF8 { text in
        id.withUTF8 { id in
          String(unsafeUninitializedCapacity: length) { buffer in
            var end = 0
            func put(_ part: UnsafeBufferPointer<UInt8>) {
              guard let source = part.baseAddress, let target = buffer.baseAddress else { return }
              (target + end).initialize(from: source, count: part.count)
              end += part.count
            }
            put(group)
            buffer[end] = 0
            end += 1
            put(text)
            buffer[end] = 0
            end += 1
            put(id)
            return end
          }
        }
      }
    }
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
    // The U+0000 found by `memchr` in the key's bytes, and the substrings cut at its byte
    // offset. Prevents: the generic search through `String.UTF8View` and the scalar
    // alignment of its indices, on every write of a commit with declared indexes.
    let zero = withUTF8Bytes(key) { bytes in splitKey(bytes: bytes).map { $0.group.count } }
    guard let zero else { return nil }
    let utf8 = key.utf8
    let separator = utf8.index(utf8.startIndex, offsetBy: zero)
    return (Substring(utf8[..<separator]), Substring(utf8[utf8.index(after: separator)...]))
  }

  /// The bytes of a store key before its first U+0000 and after it.
  static func splitKey(bytes key: UnsafeRawBufferPointer) -> (
    group: UnsafeRawBufferPointer, rest: UnsafeRawBufferPointer
  )? {
    guard let base = key.baseAddress, let found = memchr(base, 0, key.count) else { return nil }
    let zero = UnsafeRawPointer(found) - base
    return (UnsafeRawBufferPointer(rebasing: key[..<zero]), UnsafeRawBufferPointer(rebasing: key[(zero + 1)...]))
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

import Foundation

/// A secondary index of a collection, declared when the collection is made:
///
/// ```swift
/// let events = store.collection(Event.self, named: "events", indexes: [
///   .index("city", \.city), .index("date", \.date),
///   .index("attendee", each: \.attendees), .unique("email", \.email),
/// ])
/// ```
///
/// Each indexed value is kept as an encrypted store key (Docs/FORMAT.md, "Index entries"), so
/// queries on it (`CaskQuery`) need no object decoded, and every write path keeps the entries
/// in the same atomic commit as the objects.
public struct CaskIndex<T>: @unchecked Sendable {
  // Unchecked: the key path is an immutable value that is only read; `extract` is @Sendable.

  /// What an index holds for each object.
  public enum Kind: String, Sendable, Codable {
    /// One entry for the field's value.
    case plain
    /// One entry, and no two objects may share a value.
    case unique
    /// One entry for every distinct element of an array field.
    case each
  }

  /// The index's name, unique within its collection.
  public let name: String
  public let kind: Kind
  /// The indexed field (the first, for an index on several).
  public let keyPath: AnyKeyPath
  /// The indexed fields: one, or several for a composite index, whose entries sort by the
  /// first field, then the second, and so on.
  public let keyPaths: [AnyKeyPath]
  /// The name of the indexed value type (`String`, `Optional<Int>`, ...).
  public let valueType: String
  /// The texts of `object`'s entries: one, or one per distinct element.
  let extract: @Sendable (T) -> [String]

  init(
    name: String, kind: Kind, keyPath: AnyKeyPath, keyPaths: [AnyKeyPath]? = nil, valueType: String,
    extract: @escaping @Sendable (T) -> [String]
  ) {
    self.name = name
    self.kind = kind
    self.keyPath = keyPath
    self.keyPaths = keyPaths ?? [keyPath]
    self.valueType = valueType
    self.extract = extract
  }

  /// An index on `keyPath`.
  public static func index<V: CaskIndexable>(_ name: String, _ keyPath: KeyPath<T, V>) -> CaskIndex {
    let path = UncheckedSendable(keyPath)
    return CaskIndex(
      name: name, kind: .plain, keyPath: keyPath, valueType: V.caskIndexTypeName,
      extract: { [$0[keyPath: path.value].caskIndexText] })
  }

  /// A unique index on `keyPath`: a write that would give two objects the same value fails
  /// with `CollectionError.uniqueViolation` and writes nothing. `nil` of an optional field
  /// never collides (as NULL in SQL): any number of objects may lack a value.
  public static func unique<V: CaskIndexable>(_ name: String, _ keyPath: KeyPath<T, V>) -> CaskIndex {
    let path = UncheckedSendable(keyPath)
    return CaskIndex(
      name: name, kind: .unique, keyPath: keyPath, valueType: V.caskIndexTypeName,
      extract: { [$0[keyPath: path.value].caskIndexText] })
  }

  /// An index on every element of the array at `keyPath` (an object is found by any of them:
  /// `where(\.attendees, contains: "p17")`).
  public static func index<E: CaskIndexable>(_ name: String, each keyPath: KeyPath<T, [E]>) -> CaskIndex {
    let path = UncheckedSendable(keyPath)
    return CaskIndex(
      name: name, kind: .each, keyPath: keyPath, valueType: "[\(E.caskIndexTypeName)]",
      // A closure, not `map(\.caskIndexText)`: a key path through the generic element type is
      // instantiated at run time on every call, which cost an `each:` save more than its texts.
      extract: { object in IndexText.distinct(object[keyPath: path.value].map { $0.caskIndexText }) })
  }

  /// A composite index on two fields: one entry per object, sorted by `first`, then by
  /// `second`, then by id. A query with an equality on `first` and an order or a range on
  /// `second` (or equalities on both) walks just its page of entries:
  /// `.index("cityDate", \.city, \.date)` answers "the 20 newest in Lisbon, from the 1,000th"
  /// without looking at Lisbon's other entries.
  public static func index<A: CaskIndexable, B: CaskIndexable>(
    _ name: String, _ first: KeyPath<T, A>, _ second: KeyPath<T, B>
  ) -> CaskIndex {
    let firstPath = UncheckedSendable(first)
    let secondPath = UncheckedSendable(second)
    return CaskIndex(
      name: name, kind: .plain, keyPath: first, keyPaths: [first, second],
      valueType: "(\(A.caskIndexTypeName),\(B.caskIndexTypeName))",
      extract: { object in
        [
          IndexText.composite([
            object[keyPath: firstPath.value].caskIndexText, object[keyPath: secondPath.value].caskIndexText,
          ])
        ]
      })
  }

  /// The definition that a stored index must match to be used: a changed one is rebuilt.
  var definition: String {
    "\(name)|\(kind.rawValue)|\(valueType)|\(keyPathText)"
  }

  /// The indexed fields as Swift prints them, separated by commas.
  var keyPathText: String {
    keyPaths.map { "\($0)" }.joined(separator: ",")
  }

  /// A 64-bit FNV-1a hash of `definition`, as 16 hexadecimal digits.
  var definitionHash: String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in definition.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    return IndexText.hex(hash)
  }
}

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
  /// The indexed field.
  public let keyPath: AnyKeyPath
  /// The name of the indexed value type (`String`, `Optional<Int>`, ...).
  public let valueType: String
  /// The texts of `object`'s entries: one, or one per distinct element.
  let extract: @Sendable (T) -> [String]

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
      extract: { object in
        var seen = Set<String>()
        return object[keyPath: path.value].map(\.caskIndexText).filter { seen.insert($0).inserted }
      })
  }

  /// The definition that a stored index must match to be used: a changed one is rebuilt.
  var definition: String {
    "\(name)|\(kind.rawValue)|\(valueType)|\(keyPath)"
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

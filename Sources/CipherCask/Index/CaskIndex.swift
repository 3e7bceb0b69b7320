import Foundation

/// What an index holds for each object (`CaskIndex.Kind`). Outside the generic index type so
/// that the layers that see no object type (the commit hook, the catalogue check, the planner's
/// descriptors) compare kinds as values, not as their names.
public enum CaskIndexKind: String, Sendable, Codable {
  /// One entry for the field's value.
  case plain
  /// One entry, and no two objects may share a value.
  case unique
  /// One entry for every distinct element of an array field.
  case each
}

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
  public typealias Kind = CaskIndexKind

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
  /// The version the declaration gives a computed index (`version:`), bumped by the app when
  /// the computation changes; `nil` for an index on stored properties, identified by their
  /// names.
  public let version: Int?
  /// The texts of `object`'s entries: one, or one per distinct element.
  let extract: @Sendable (T) -> [String]

  init(
    name: String, kind: Kind, keyPath: AnyKeyPath, keyPaths: [AnyKeyPath]? = nil, valueType: String,
    version: Int? = nil, extract: @escaping @Sendable (T) -> [String]
  ) {
    self.name = name
    self.kind = kind
    self.keyPath = keyPath
    self.keyPaths = keyPaths ?? [keyPath]
    self.valueType = valueType
    self.version = version
    self.extract = extract
  }

  /// An index on `keyPath`.
  ///
  /// - Parameter version: required for a computed property (`var year: Int { ... }`), whose key
  ///   path has no stable name: the index is then identified by its name, kind, value type and
  ///   this version, so bump it whenever the computation changes (the index is rebuilt). An
  ///   index on a computed property without one is refused (`CollectionError.invalidIndex` at
  ///   the first write or build).
  public static func index<V: CaskIndexable>(_ name: String, _ keyPath: KeyPath<T, V>, version: Int? = nil)
    -> CaskIndex
  {
    let path = UncheckedSendable(keyPath)
    return CaskIndex(
      name: name, kind: .plain, keyPath: keyPath, valueType: V.caskIndexTypeName, version: version,
      extract: { [$0[keyPath: path.value].caskIndexText] })
  }

  /// A unique index on `keyPath`: a write that would give two objects the same value fails
  /// with `CollectionError.uniqueViolation` and writes nothing. `nil` of an optional field
  /// never collides (as NULL in SQL): any number of objects may lack a value.
  /// `version` as for `index(_:_:version:)`.
  public static func unique<V: CaskIndexable>(_ name: String, _ keyPath: KeyPath<T, V>, version: Int? = nil)
    -> CaskIndex
  {
    let path = UncheckedSendable(keyPath)
    return CaskIndex(
      name: name, kind: .unique, keyPath: keyPath, valueType: V.caskIndexTypeName, version: version,
      extract: { [$0[keyPath: path.value].caskIndexText] })
  }

  /// An index on every element of the array at `keyPath` (an object is found by any of them:
  /// `where(\.attendees, contains: "p17")`).
  /// `version` as for `index(_:_:version:)`.
  public static func index<E: CaskIndexable>(
    _ name: String, each keyPath: KeyPath<T, [E]>, version: Int? = nil
  ) -> CaskIndex {
    let path = UncheckedSendable(keyPath)
    return CaskIndex(
      name: name, kind: .each, keyPath: keyPath, valueType: "[\(E.caskIndexTypeName)]", version: version,
      // A loop, not `map(\.caskIndexText)` nor `map { }`: a key path through the generic
      // element type is instantiated at run time on every call, and the generic `map` is not
      // specialized for `[E]` here; each cost an `each:` save more than its texts.
      extract: { object in
        let values = object[keyPath: path.value]
        var texts: [String] = []
        texts.reserveCapacity(values.count)
        for index in values.indices { texts.append(values[index].caskIndexText) }
        return IndexText.distinct(texts)
      })
  }

  /// A composite index on two fields: one entry per object, sorted by `first`, then by
  /// `second`, then by id. A query with an equality on `first` and an order or a range on
  /// `second` (or equalities on both) walks just its page of entries:
  /// `.index("cityDate", \.city, \.date)` answers "the 20 newest in Lisbon, from the 1,000th"
  /// without looking at Lisbon's other entries.
  /// `version` as for `index(_:_:version:)`, needed when either field is computed.
  public static func index<A: CaskIndexable, B: CaskIndexable>(
    _ name: String, _ first: KeyPath<T, A>, _ second: KeyPath<T, B>, version: Int? = nil
  ) -> CaskIndex {
    let firstPath = UncheckedSendable(first)
    let secondPath = UncheckedSendable(second)
    return CaskIndex(
      name: name, kind: .plain, keyPath: first, keyPaths: [first, second],
      valueType: "(\(A.caskIndexTypeName),\(B.caskIndexTypeName))", version: version,
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

  /// The indexed fields as Swift prints them, separated by commas; for a computed index, its
  /// declared version instead (`isStable`).
  var keyPathText: String {
    guard hasStableKeyPaths else { return "computed:v\(version ?? 0)" }
    // A version on stored properties is part of the identity too (bumping it rebuilds); none
    // leaves the text as it always was, so indexes recorded before keep their identity.
    return keyPaths.map { "\($0)" }.joined(separator: ",") + (version.map { "#v\($0)" } ?? "")
  }

  /// Whether every key path prints as a chain of stored properties (`\Event.city`), the same
  /// in every process. A computed property prints as `<computed 0x... (Int)>`, an address that
  /// changes at every launch: an identity made of it would rebuild the index at every launch.
  var hasStableKeyPaths: Bool {
    keyPaths.allSatisfy { path in
      let text = "\(path)"
      return !text.contains("<")
    }
  }

  /// Why the declaration cannot be identified across launches, if it cannot.
  var identityProblem: String? {
    guard !hasStableKeyPaths, version == nil else { return nil }
    return "index '\(name)' is on a computed property, whose key path has no stable name; declare it with "
      + "a version (version: 1) and bump it when the computation changes"
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

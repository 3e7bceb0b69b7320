import Foundation

/// One condition of a query on one field, as index bounds and as a test of an object.
struct QueryPredicate<T>: @unchecked Sendable {
  // Unchecked: the key path is an immutable value, only compared; `extract` is @Sendable.
  enum Kind: String, Sendable {
    case equals
    case range
    case contains
  }

  let keyPath: AnyKeyPath
  let kind: Kind
  /// The entries of an index on `keyPath` that satisfy it.
  let bounds: EntryBounds
  /// The object's texts for `keyPath`: one, or one per element for `contains`.
  let extract: @Sendable (T) -> [String]

  /// Whether an object with these texts satisfies it.
  func accepts(_ texts: [String]) -> Bool {
    texts.contains { text in
      let probe = text + "\u{0}"
      if let lower = bounds.lower, bytesPrecede(probe, lower) { return false }
      if let upper = bounds.upper, !bytesPrecede(probe, upper) { return false }
      return true
    }
  }

  func matches(_ object: T) -> Bool {
    accepts(extract(object))
  }

  /// Whether an index of `kind` on the same key path can answer it.
  func canUse(_ descriptor: IndexDescriptor) -> Bool {
    guard descriptor.keyPath == keyPath else { return false }
    return kind == .contains ? descriptor.kind == "each" : descriptor.kind != "each"
  }
}

/// A query's order: by a field's index text (then by id), ascending or descending.
struct QueryOrder<T>: @unchecked Sendable {
  let keyPath: AnyKeyPath
  let ascending: Bool
  let text: @Sendable (T) -> String
}

extension QueryPredicate {
  static func value<V: CaskIndexable>(_ keyPath: KeyPath<T, V>, kind: Kind, bounds: EntryBounds) -> QueryPredicate {
    let path = UncheckedSendable(keyPath)
    return QueryPredicate(keyPath: keyPath, kind: kind, bounds: bounds) { [$0[keyPath: path.value].caskIndexText] }
  }

  static func range<V: CaskIndexable>(
    _ keyPath: KeyPath<T, V>, lower: V?, lowerInclusive: Bool = true, upper: V?, upperInclusive: Bool
  ) -> QueryPredicate {
    value(
      keyPath, kind: .range,
      bounds: .range(
        lower: lower?.caskIndexText, lowerInclusive: lowerInclusive, upper: upper?.caskIndexText,
        upperInclusive: upperInclusive))
  }
}

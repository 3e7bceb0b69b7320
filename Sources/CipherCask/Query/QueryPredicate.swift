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

  /// The bounds as texts, to compare a text with directly (texts hold no U+0000, so this is
  /// the same test as comparing `text + U+0000` with `bounds`, without building it).
  let lowerText: String?
  let lowerInclusive: Bool
  let upperText: String?
  let upperInclusive: Bool

  init(
    keyPath: AnyKeyPath, kind: Kind, lower: String?, lowerInclusive: Bool = true, upper: String?,
    upperInclusive: Bool = true, extract: @escaping @Sendable (T) -> [String]
  ) {
    self.keyPath = keyPath
    self.kind = kind
    self.lowerText = lower
    self.lowerInclusive = lowerInclusive
    self.upperText = upper
    self.upperInclusive = upperInclusive
    self.bounds = .range(lower: lower, lowerInclusive: lowerInclusive, upper: upper, upperInclusive: upperInclusive)
    self.extract = extract
  }

  /// The same bounds as UTF-8 bytes, to test a text as it lies in an entry. Made when asked
  /// (once per walk that tests ids), not with every condition: most queries never need it.
  var textBounds: TextBounds {
    TextBounds(
      lower: lowerText.map { Array($0.utf8) }, lowerInclusive: lowerInclusive, upper: upperText.map { Array($0.utf8) },
      upperInclusive: upperInclusive)
  }

  /// Whether an object with these texts satisfies it.
  func accepts<S: StringProtocol>(_ texts: [S]) -> Bool {
    texts.contains { text in
      if let lowerText {
        let order = compareBytes(text, lowerText)
        if order < 0 || (order == 0 && !lowerInclusive) { return false }
      }
      if let upperText {
        let order = compareBytes(text, upperText)
        if order > 0 || (order == 0 && !upperInclusive) { return false }
      }
      return true
    }
  }

  func matches(_ object: T) -> Bool {
    accepts(extract(object))
  }

  /// Whether an index of `kind` on the same key path can answer it.
  func canUse(_ descriptor: IndexDescriptor) -> Bool {
    guard !descriptor.isComposite, descriptor.keyPath == keyPath else { return false }
    return kind == .contains ? descriptor.kind == .each : descriptor.kind != .each
  }
}

/// A condition's bounds on a text as UTF-8 bytes: `QueryPredicate.accepts(_:)` for one text
/// given as the bytes it has in an entry, with the same comparisons and no `String` made. Not
/// generic, so that a walk testing every id it passes calls it directly.
struct TextBounds: Sendable {
  let lower: [UInt8]?
  let lowerInclusive: Bool
  let upper: [UInt8]?
  let upperInclusive: Bool

  /// Whether `text` (UTF-8 bytes) lies within the bounds.
  func accepts(_ text: UnsafeRawBufferPointer) -> Bool {
    if let lower {
      let order = lower.withUnsafeBytes { compareRaw(text, $0) }
      if order < 0 || (order == 0 && !lowerInclusive) { return false }
    }
    if let upper {
      let order = upper.withUnsafeBytes { compareRaw(text, $0) }
      if order > 0 || (order == 0 && !upperInclusive) { return false }
    }
    return true
  }
}

/// A query's order: by a field's index text (then by id), ascending or descending.
struct QueryOrder<T>: @unchecked Sendable {
  let keyPath: AnyKeyPath
  let ascending: Bool
  let text: @Sendable (T) -> String
}

extension QueryPredicate {
  static func equal<V: CaskIndexable>(_ keyPath: KeyPath<T, V>, _ value: V) -> QueryPredicate {
    let path = UncheckedSendable(keyPath)
    let text = value.caskIndexText
    return QueryPredicate(keyPath: keyPath, kind: .equals, lower: text, upper: text) {
      [$0[keyPath: path.value].caskIndexText]
    }
  }

  static func range<V: CaskIndexable>(
    _ keyPath: KeyPath<T, V>, lower: V?, lowerInclusive: Bool = true, upper: V?, upperInclusive: Bool
  ) -> QueryPredicate {
    let path = UncheckedSendable(keyPath)
    return QueryPredicate(
      keyPath: keyPath, kind: .range, lower: lower?.caskIndexText, lowerInclusive: lowerInclusive,
      upper: upper?.caskIndexText, upperInclusive: upperInclusive
    ) { [$0[keyPath: path.value].caskIndexText] }
  }
}

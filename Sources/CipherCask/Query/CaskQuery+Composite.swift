import Foundation

/// How a composite index answers part of a query: one walk of a range of its entries.
struct CompositeMatch<T>: Sendable {
  var descriptor: IndexDescriptor
  /// The positions in the query's `predicates` of the conditions it answers.
  var covered: [Int]
  /// The entries it walks, as a condition on the composite texts.
  var predicate: QueryPredicate<T>
  /// Whether its entries come in the query's order (equal leading fields, order on the last).
  var ordered: Bool
  /// UTF-8 bytes of the leading texts at the start of every entry walked: the order field's
  /// text follows them.
  var prefixLength: Int
}

extension CaskQuery {
  /// The ready composite index that answers the most of the query's conditions, if one
  /// answers more than a single-field index could: equalities on all its fields, or on all but
  /// the last with a range or the order on the last.
  ///
  /// - Complexity: O(i × f × p) for i indexes of f fields and p conditions.
  func compositeMatch(in ready: [IndexDescriptor]) -> CompositeMatch<T>? {
    var best: CompositeMatch<T>?
    for descriptor in ready where descriptor.isComposite {
      guard let candidate = match(descriptor) else { continue }
      if let current = best {
        let better =
          candidate.covered.count > current.covered.count
          || (candidate.covered.count == current.covered.count && candidate.ordered && !current.ordered)
        if !better { continue }
      }
      best = candidate
    }
    return best
  }

  private func match(_ descriptor: IndexDescriptor) -> CompositeMatch<T>? {
    var covered: [Int] = []
    var texts: [String] = []
    for keyPath in descriptor.keyPaths {
      guard
        let position = predicates.indices.first(where: {
          predicates[$0].keyPath == keyPath && predicates[$0].kind == .equals && !covered.contains($0)
        }), let text = predicates[position].lowerText
      else { break }
      covered.append(position)
      texts.append(text)
    }
    let fields = descriptor.keyPaths.count
    if texts.count == fields {
      let text = IndexText.composite(texts)
      let predicate = QueryPredicate<T>(
        keyPath: descriptor.keyPath, kind: .equals, lower: text, upper: text, extract: { _ in [] })
      return CompositeMatch(
        descriptor: descriptor, covered: covered, predicate: predicate, ordered: false, prefixLength: 0)
    }
    guard !texts.isEmpty, texts.count == fields - 1 else { return nil }
    let last = descriptor.keyPaths[fields - 1]
    // Every entry with these leading texts lies from `prefix` up to (not including) `end`:
    // the prefix's closing 01 01 raised to 01 02.
    let prefix = IndexText.compositePrefix(texts)
    let end = String(decoding: prefix.utf8.dropLast(), as: UTF8.self) + "\u{2}"
    var lower = (text: prefix, inclusive: true)
    var upper = (text: end, inclusive: false)
    if let position = predicates.indices.first(where: {
      predicates[$0].keyPath == last && predicates[$0].kind == .range
    }) {
      covered.append(position)
      let range = predicates[position]
      if let text = range.lowerText { lower = (prefix + text, range.lowerInclusive) }
      if let text = range.upperText { upper = (prefix + text, range.upperInclusive) }
    }
    let ordered = order?.keyPath == last
    // An equality on the leading field alone is answered as well by an index on that field.
    guard ordered || covered.count == fields else { return nil }
    let predicate = QueryPredicate<T>(
      keyPath: descriptor.keyPath, kind: .range, lower: lower.text, lowerInclusive: lower.inclusive,
      upper: upper.text, upperInclusive: upper.inclusive, extract: { _ in [] })
    return CompositeMatch(
      descriptor: descriptor, covered: covered, predicate: predicate, ordered: ordered,
      prefixLength: prefix.utf8.count)
  }
}

import Foundation

/// A query of a collection: conditions on fields (answered from indexes where the collection
/// has them, by scanning where it has not), a closure filter, an order, and a page.
///
/// ```swift
/// let page = try events.query()
///   .where(\.city, equals: "Lisbon")
///   .sorted(by: \.date, ascending: false)
///   .limit(20).offset(40)
///   .fetch()
/// ```
///
/// A query is a value: each method returns a changed copy. Conditions combine with AND. Values
/// compare as their index texts do (`CaskIndexable`): numbers and dates by value, strings by
/// their UTF-8 bytes, `nil` before every value. Objects that sort equal come in the order of
/// their ids' text, and without `sorted(by:)` results come in that order (by the ids' UTF-8
/// bytes: for `Int` ids, "10" before "9"), which is the order of an index's entries, so a
/// page of an equality needs no sort.
public struct CaskQuery<T: Codable & Identifiable & Sendable>: Sendable
where T.ID: CustomStringConvertible & Sendable {
  let collection: CaskCollection<T>
  var predicates: [QueryPredicate<T>] = []
  var filters: [@Sendable (T) throws -> Bool] = []
  var order: QueryOrder<T>?
  var limitCount: Int?
  var offsetCount = 0

  init(collection: CaskCollection<T>) {
    self.collection = collection
  }

  private func adding(_ predicate: QueryPredicate<T>) -> CaskQuery {
    var copy = self
    copy.predicates.append(predicate)
    return copy
  }

  /// Objects whose field at `keyPath` equals `value`.
  public func `where`<V: CaskIndexable>(_ keyPath: KeyPath<T, V>, equals value: V) -> CaskQuery {
    adding(.equal(keyPath, value))
  }

  /// Objects whose field lies in `range`.
  public func `where`<V: CaskIndexable & Comparable>(_ keyPath: KeyPath<T, V>, in range: ClosedRange<V>) -> CaskQuery {
    adding(.range(keyPath, lower: range.lowerBound, upper: range.upperBound, upperInclusive: true))
  }

  /// Objects whose field lies in `range`.
  public func `where`<V: CaskIndexable & Comparable>(_ keyPath: KeyPath<T, V>, in range: Range<V>) -> CaskQuery {
    adding(.range(keyPath, lower: range.lowerBound, upper: range.upperBound, upperInclusive: false))
  }

  /// Objects whose field is at least the range's lower bound.
  public func `where`<V: CaskIndexable & Comparable>(_ keyPath: KeyPath<T, V>, in range: PartialRangeFrom<V>)
    -> CaskQuery
  {
    adding(.range(keyPath, lower: range.lowerBound, upper: nil, upperInclusive: true))
  }

  /// Objects whose field is at most the range's upper bound.
  public func `where`<V: CaskIndexable & Comparable>(_ keyPath: KeyPath<T, V>, in range: PartialRangeThrough<V>)
    -> CaskQuery
  {
    adding(.range(keyPath, lower: nil, upper: range.upperBound, upperInclusive: true))
  }

  /// Objects whose field is below the range's upper bound.
  public func `where`<V: CaskIndexable & Comparable>(_ keyPath: KeyPath<T, V>, in range: PartialRangeUpTo<V>)
    -> CaskQuery
  {
    adding(.range(keyPath, lower: nil, upper: range.upperBound, upperInclusive: false))
  }

  /// Objects whose optional field holds a value in `range` (`nil` is in no range).
  public func `where`<V: CaskIndexable & Comparable>(_ keyPath: KeyPath<T, V?>, in range: ClosedRange<V>) -> CaskQuery {
    adding(
      .range(keyPath, lower: Optional(range.lowerBound), upper: Optional(range.upperBound), upperInclusive: true))
  }

  /// Objects whose optional field holds a value in `range` (`nil` is in no range).
  public func `where`<V: CaskIndexable & Comparable>(_ keyPath: KeyPath<T, V?>, in range: Range<V>) -> CaskQuery {
    adding(
      .range(keyPath, lower: Optional(range.lowerBound), upper: Optional(range.upperBound), upperInclusive: false))
  }

  /// Objects whose array field at `keyPath` contains `element`.
  public func `where`<E: CaskIndexable>(_ keyPath: KeyPath<T, [E]>, contains element: E) -> CaskQuery {
    let path = UncheckedSendable(keyPath)
    return adding(
      QueryPredicate(keyPath: keyPath, kind: .contains, lower: element.caskIndexText, upper: element.caskIndexText) {
        $0[keyPath: path.value].map { $0.caskIndexText }
      })
  }

  /// Objects for which `isIncluded` is true, tested on decoded objects after the conditions
  /// above (so with indexes, only on the objects they leave).
  public func filter(_ isIncluded: @escaping @Sendable (T) throws -> Bool) -> CaskQuery {
    var copy = self
    copy.filters.append(isIncluded)
    return copy
  }

  /// Sorts by the field at `keyPath` (then by id), ascending or descending.
  public func sorted<V: CaskIndexable>(by keyPath: KeyPath<T, V>, ascending: Bool = true) -> CaskQuery {
    var copy = self
    let path = UncheckedSendable(keyPath)
    copy.order = QueryOrder(keyPath: keyPath, ascending: ascending) { $0[keyPath: path.value].caskIndexText }
    return copy
  }

  /// At most `count` results.
  public func limit(_ count: Int) -> CaskQuery {
    var copy = self
    copy.limitCount = max(0, count)
    return copy
  }

  /// Skips the first `count` results.
  public func offset(_ count: Int) -> CaskQuery {
    var copy = self
    copy.offsetCount = max(0, count)
    return copy
  }
}

extension CaskCollection {
  /// A query of every object of this collection, to narrow with `where`, `filter`, `sorted`,
  /// `limit` and `offset`.
  public func query() -> CaskQuery<T> {
    CaskQuery(collection: self)
  }
}

import Foundation

extension CaskCollection {
  /// The objects for which `isIncluded` returns `true`.
  ///
  /// - Complexity: O(n) reads and decodes: objects are encrypted, so there is no index on
  ///   their fields.
  public func filter(_ isIncluded: (T) throws -> Bool) throws -> [T] {
    var matches: [T] = []
    var failures: [CollectionError] = []
    try forEachObject(onDecodingFailure: .fail, failures: &failures) { object in
      if try isIncluded(object) { matches.append(object) }
    }
    return matches
  }

  /// The first object, in the order of `ids()`, that satisfies `predicate`.
  ///
  /// - Complexity: O(n) in the worst case; stops at the first match.
  public func first(where predicate: (T) throws -> Bool) throws -> T? {
    for id in try ids() {
      if let object = try get(id: id), try predicate(object) { return object }
    }
    return nil
  }

  /// A page of objects: those matching `predicate` (all by default), sorted by
  /// `areInIncreasingOrder` (by default in the order of `ids()`), skipping `offset`, at most
  /// `limit`. Objects that `areInIncreasingOrder` leaves equal are in the order of `ids()`,
  /// so that pages are the same however the objects lie in the files (a re-save moves an
  /// object there).
  ///
  /// - Complexity: O(n) decodes plus O(m log m) to sort the m matches (twice with
  ///   `areInIncreasingOrder`: by id, then by it, stably).
  public func fetch(
    where predicate: (T) throws -> Bool = { _ in true },
    sortedBy areInIncreasingOrder: ((T, T) throws -> Bool)? = nil,
    limit: Int? = nil,
    offset: Int = 0
  ) throws -> [T] {
    var matches = try filter(predicate)
    matches = Self.positionsInIDOrder(matches.map(\.id)).map { matches[$0] }
    // Swift's sort is stable: ties keep the id order.
    if let areInIncreasingOrder { try matches.sort(by: areInIncreasingOrder) }
    let start = min(max(0, offset), matches.count)
    // Compared with what is left, not added to `start`: `limit: .max` must not overflow.
    let end = limit.map { start + min(matches.count - start, max(0, $0)) } ?? matches.count
    return Array(matches[start..<end])
  }
}

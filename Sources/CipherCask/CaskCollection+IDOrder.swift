import Foundation

/// The order in which `ids()`, `first(where:)` and `fetch` without `sortedBy` list objects.
extension CaskCollection {
  /// Whether `T.ID` is `Comparable`, so that ids are listed by its own `<`.
  static var idsHaveOwnOrder: Bool { T.ID.self is any Comparable.Type }

  /// The positions of `ids` in id order: ascending by `T.ID`'s own `<` when `T.ID` is
  /// `Comparable` (`Int`: 2 before 10; `String`: Swift's string order; `UUID`: its bytes), and
  /// otherwise by the ids' text compared byte by byte. Ids that compare equal are ordered by
  /// their text's bytes, whatever their order in `ids`.
  ///
  /// - Complexity: O(n log n) comparisons for the n ids, and O(n) dynamic casts.
  static func positionsInIDOrder(_ ids: [T.ID]) -> [Int] {
    if let comparable = T.ID.self as? any Comparable.Type, let positions = positions(of: ids, by: comparable) {
      return positions
    }
    let texts = ids.map { Array($0.description.utf8) }
    return texts.indices.sorted { texts[$0].lexicographicallyPrecedes(texts[$1]) }
  }

  /// `ids` sorted by `<` of `C`, which is `T.ID` itself (the caller opened it from `T.ID`).
  private static func positions<C: Comparable>(of ids: [T.ID], by _: C.Type) -> [Int]? {
    guard let typed = ids as? [C] else { return nil }
    // Ids that compare equal (canonically equivalent strings) are distinct keys: order them by
    // their text's bytes, so that the order does not depend on the order of the input.
    return typed.indices.sorted {
      if typed[$0] < typed[$1] { return true }
      if typed[$1] < typed[$0] { return false }
      return ids[$0].description.utf8.lexicographicallyPrecedes(ids[$1].description.utf8)
    }
  }

  /// `ids` in id order.
  static func sortedByID(_ ids: [T.ID]) -> [T.ID] {
    positionsInIDOrder(ids).map { ids[$0] }
  }
}

import Foundation

/// How a query is answered, worked out from the indexes ready at one moment.
struct QueryPlan<T>: Sendable {
  struct Indexed: Sendable {
    var name: String
    /// The store group of its entries.
    var group: String
    var entries: IndexSource
    /// Where sets of the ids of `entries` are kept between queries, when they are in memory.
    var idSets: IDSetCache?
  }

  /// A condition answered by an index, with the number of entries its bounds hold (what
  /// choosing the driver compares).
  struct IndexedCondition: Sendable {
    var predicate: QueryPredicate<T>
    var index: Indexed
    var entryCount: Int
  }

  /// The indexed condition whose entries are walked (the one with the fewest).
  var driver: IndexedCondition?
  /// The other indexed conditions, checked on each candidate's entries.
  var checks: [IndexedCondition] = []
  /// Conditions without a usable index, tested on decoded objects.
  var residual: [QueryPredicate<T>] = []
  /// The index of the sort field, if ready.
  var sortIndex: Indexed?
  /// Whether results are produced by walking the sort index (rather than sorting candidates).
  var walksSortIndex = false
  /// Whether that walk tests the driver's condition against the set of the driver's ids,
  /// collected first (`IDSet`), rather than by a lookup of each walked id's texts: set when
  /// the walk is expected to visit more entries than a third of the driver's.
  var testsDriverByIDs = false
  /// Set when the driver is a composite index whose entries come in the query's order: the
  /// UTF-8 length of the leading texts before the order field's text in each entry.
  var orderedDriverPrefix: Int?

  /// The text `id` has for the query's order in the index that orders the results, if any.
  func sortText(of id: String) throws -> Substring? {
    if let prefix = orderedDriverPrefix, let text = try driver?.index.entries.firstText(of: id) {
      return Substring(text.utf8.dropFirst(prefix))
    }
    return try sortIndex?.entries.firstText(of: id)
  }
}

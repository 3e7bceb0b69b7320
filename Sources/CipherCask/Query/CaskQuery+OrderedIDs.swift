import Foundation

/// The ids a plan selects, in the query's order, worked out from index entries alone: the
/// walks of a driver or a sort index, the sort of candidates, and the skip of an offset.
extension CaskQuery {
  /// The ids the indexed part selects, in no set order, each once; `nil` when nothing is
  /// indexed.
  func candidateIDs(_ plan: QueryPlan<T>) throws -> [String]? {
    guard let driver = plan.driver else { return nil }
    var result: [String] = []
    var seen = Set<ByteString>()
    let checks = IDChecks(plan.checks)
    let multiple = driver.predicate.kind == .contains || driver.predicate.kind == .range
    try driver.index.entries.idBytes(in: driver.predicate.bounds) { bytes in
      if multiple {
        // An id with two texts in the bounds is checked once.
        let id = String(decoding: bytes, as: UTF8.self)
        guard seen.insert(ByteString(id)).inserted, try checks.passes(bytes) else { return true }
        result.append(id)
      } else if try checks.passes(bytes) {
        result.append(String(decoding: bytes, as: UTF8.self))
      }
      return true
    }
    return result
  }

  /// A range of entries whose ids are the results one for one, in result order (reversed
  /// with `descending`), when a plan walks one and no other condition is checked per id:
  /// there, the k-th entry of the range is the k-th result, so an offset is skipped by rank.
  struct RankedWalk {
    var entries: IndexSource
    var bounds: EntryBounds
    var descending: Bool
  }

  /// The walk a plan's results come from without a check per id, if it has one: a composite
  /// index that orders them, the sort index alone (no condition), or, without an order, one
  /// text of the driver (its entries come in id order, one per id).
  func rankedWalk(_ plan: QueryPlan<T>) -> RankedWalk? {
    guard plan.checks.isEmpty else { return nil }
    if plan.orderedDriverPrefix != nil, let driver = plan.driver, let order {
      return RankedWalk(entries: driver.index.entries, bounds: driver.predicate.bounds, descending: !order.ascending)
    }
    if plan.walksSortIndex, plan.driver == nil, let sortIndex = plan.sortIndex, let order {
      return RankedWalk(
        entries: sortIndex.entries, bounds: EntryBounds(lower: nil, upper: nil), descending: !order.ascending)
    }
    if order == nil, let driver = plan.driver, driver.predicate.kind != .range {
      return RankedWalk(entries: driver.index.entries, bounds: driver.predicate.bounds, descending: false)
    }
    return nil
  }

  /// Calls `body` with the ids the query's conditions and order select, in result order and
  /// without the first `skipping`, before objects are looked at (the residual conditions and
  /// filters are the caller's), until it returns false. Returns false when nothing is indexed
  /// or ordered by an index and the caller must scan. Beside each id, its text in the sort
  /// index when the walk read it there (`nil` elsewhere: `QueryPlan.sortText(of:)` finds it).
  ///
  /// - Complexity: where no id is checked (`rankedWalk`), the skip costs O(log n + n / c)
  ///   (a rank over chunks of c entries, or over the pages' counts of a sorted view), whatever
  ///   `skipping` is; a walk that checks ids visits each skipped one.
  func forEachOrderedID(
    _ plan: QueryPlan<T>, skipping: Int, _ body: (_ id: String, _ sortText: Substring?) throws -> Bool
  ) throws -> Bool {
    if let walk = rankedWalk(plan) {
      try walk.entries.ids(in: walk.bounds, descending: walk.descending, skipping: skipping) {
        try body(String($0), nil)
      }
      return true
    }
    var left = skipping
    let planChecks = IDChecks(plan.checks)
    // What is left after the skip, for the walks that check each id: an id is made a `String`
    // only once it is handed over.
    func handOver(_ id: UnsafeRawBufferPointer, sortText: UnsafeRawBufferPointer? = nil) throws -> Bool {
      guard left == 0 else {
        left -= 1
        return true
      }
      return try body(
        String(decoding: id, as: UTF8.self), sortText.map { Substring(String(decoding: $0, as: UTF8.self)) })
    }
    // A composite index's entries already come in the query's order.
    if plan.orderedDriverPrefix != nil, let driver = plan.driver, let order {
      try driver.index.entries.idBytes(in: driver.predicate.bounds, descending: !order.ascending) { id in
        guard try planChecks.passes(id) else { return true }
        return try handOver(id)
      }
      return true
    }
    if plan.walksSortIndex, let sortIndex = plan.sortIndex, let order {
      var checks = plan.checks
      var members = IDSet(capacity: 0)
      let testsMembers = plan.driver != nil && plan.testsDriverByIDs
      if let driver = plan.driver {
        if testsMembers {
          members = try driver.index.idSet(in: driver.predicate.bounds, capacity: driver.entryCount)
        } else {
          checks.insert(driver, at: 0)
        }
      }
      // Nothing else to test: the skipped ids are counted in the walk, not made into `String`s.
      let skippedInWalk = checks.isEmpty ? skipping : 0
      left -= skippedInWalk
      let walkChecks = IDChecks(checks)
      // The sort index is never an `each` index: an entry's text is its id's only one, which
      // the caller would otherwise look up by id.
      try sortIndex.entries.entryBytes(
        in: EntryBounds(lower: nil, upper: nil), descending: !order.ascending, members: members,
        testsMembers: testsMembers, skipping: skippedInWalk
      ) { text, id in
        guard try walkChecks.passes(id) else { return true }
        return try handOver(id, sortText: text)
      }
      return true
    }
    // One text per driver: its entries already come in id order, so a page stops early.
    if order == nil, let driver = plan.driver, driver.predicate.kind != .range {
      try driver.index.entries.idBytes(in: driver.predicate.bounds) { id in
        guard try planChecks.passes(id) else { return true }
        return try handOver(id)
      }
      return true
    }
    guard var ids = try candidateIDs(plan) else { return false }
    if let order, let sortIndex = plan.sortIndex {
      ids = try sortedByIndex(ids, sortIndex, ascending: order.ascending)
    } else if order == nil {
      ids.sort(by: bytesPrecede)
    } else {
      return false  // ordered by a field without an index: the objects must be read first
    }
    for id in ids.dropFirst(skipping) where try !body(id, nil) { break }
    return true
  }

  /// `ids` in the order of their first text in `sortIndex`, then by id.
  private func sortedByIndex(_ ids: [String], _ sortIndex: QueryPlan<T>.Indexed, ascending: Bool) throws -> [String] {
    // Sorted by the texts' first 16 bytes as two integers (the whole text of a number or a
    // date), the texts themselves only where those are equal: String comparisons cost
    // several times more.
    let keyed = try ids.map { id -> (UInt64, UInt64, Substring, String) in
      let text = try sortIndex.entries.firstText(of: id) ?? ""
      let (high, low) = Self.prefixKey(text)
      return (high, low, text, id)
    }
    let sorted = keyed.sorted { a, b in
      if a.0 != b.0 { return a.0 < b.0 }
      if a.1 != b.1 { return a.1 < b.1 }
      let byText = compareBytes(a.2, b.2)
      return byText != 0 ? byText < 0 : bytesPrecede(a.3, b.3)
    }
    return ascending ? sorted.map { $0.3 } : sorted.reversed().map { $0.3 }
  }
}

/// Indexed conditions as a walk tests each id against them: each index's entries with the
/// condition's bounds as bytes (`TextBounds`), nothing generic. Entries in memory are tested
/// as bytes (`IndexEntries.hasText`), with no `String` made: a walk of a sort index tests
/// every id it passes, and a `String`, an array of texts and the generic conditions' metadata
/// per id were most of such a walk.
struct IDChecks {
  /// Entries in memory, in a box whose own method tests them: there they are borrowed in
  /// place, where a test called through an optional, an enum's payload or the box's property
  /// from outside copied them first (six arrays retained and released per id, about a tenth
  /// of the test).
  private final class Entries {
    let entries: IndexEntries
    init(_ entries: IndexEntries) { self.entries = entries }

    /// `IndexEntries.hasText`, called on the box's own (immutable) entries.
    func hasText(ofID id: UnsafeRawBufferPointer, within bounds: TextBounds) -> Bool {
      entries.hasText(ofID: id) { bounds.accepts($0) }
    }
  }

  private struct Check {
    /// The entries when in memory; else `view`.
    var memory: Entries?
    var view: IndexSource?
    var bounds: TextBounds
  }
  private let checks: [Check]

  init<T>(_ conditions: [QueryPlan<T>.IndexedCondition]) {
    checks = conditions.map { condition in
      let source = condition.index.entries
      if case .memory(let entries) = source {
        return Check(memory: Entries(entries), view: nil, bounds: condition.predicate.textBounds)
      }
      return Check(memory: nil, view: source, bounds: condition.predicate.textBounds)
    }
  }

  /// Whether the id whose UTF-8 bytes are `id` has, in each index, a text within its bounds.
  ///
  /// - Throws: `CaskError` when an object read for a view's texts fails.
  func passes(_ id: UnsafeRawBufferPointer) throws -> Bool {
    try checks.withUnsafeBufferPointer { checks in
      for index in checks.indices {
        if let memory = checks[index].memory {
          guard memory.hasText(ofID: id, within: checks[index].bounds) else { return false }
        } else if let view = checks[index].view {
          let texts = try view.texts(of: String(decoding: id, as: UTF8.self))
          let bounds = checks[index].bounds
          guard texts.contains(where: { text in withUTF8Bytes(text) { bounds.accepts($0) } }) else { return false }
        }
      }
      return true
    }
  }
}

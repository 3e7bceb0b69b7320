import Foundation

extension CaskQuery {
  /// Which indexes the query uses and what it scans, in words.
  ///
  /// - Complexity: O(1) after the indexes' entries are in memory.
  public func explain() throws -> String {
    let plan = try makePlan()
    var parts: [String] = []
    if let driver = plan.driver {
      let collected = plan.testsDriverByIDs ? ", its ids collected first" : ""
      parts.append("index '\(driver.index.name)' (\(driver.predicate.kind.rawValue)\(collected))")
      if plan.orderedDriverPrefix != nil { parts.append("order from index '\(driver.index.name)'") }
    }
    for check in plan.checks {
      parts.append("index '\(check.index.name)' (\(check.predicate.kind.rawValue), checked per object id)")
    }
    if plan.driver == nil && !plan.walksSortIndex {
      parts.append("scan of every object")
    }
    if !plan.residual.isEmpty {
      parts.append("\(plan.residual.count) condition(s) without an index, tested on objects")
    }
    if !filters.isEmpty { parts.append("\(filters.count) filter closure(s), run on objects") }
    if order != nil, plan.orderedDriverPrefix == nil {
      if let sortIndex = plan.sortIndex {
        parts.append(
          plan.walksSortIndex
            ? "order from index '\(sortIndex.name)'" : "sorted by the entries of index '\(sortIndex.name)'")
      } else {
        parts.append("sorted in memory (no index on the sort field)")
      }
    }
    return parts.joined(separator: "; ")
  }

  /// The plan, from the catalogue and the entries of the ready indexes, all read at one
  /// moment (under the index lock).
  func makePlan() throws -> QueryPlan<T> {
    try collection.checkName()
    var plan = QueryPlan<T>()
    guard let definition = collection.indexDefinition, definition.invalidReason == nil else {
      plan.residual = predicates
      return plan
    }
    collection.prepareIndexesForQuery()
    let runtime = IndexRuntime.of(collection.store)
    let name = collection.name
    var indexed: [QueryPlan<T>.IndexedCondition] = []
    var composite: (match: CompositeMatch<T>, condition: QueryPlan<T>.IndexedCondition)?
    try runtime.state.withLock { state in
      let catalog = try runtime.catalog(name, in: &state)
      let ready = definition.descriptors.filter {
        catalog[$0.name]?.hash == $0.hash && catalog[$0.name]?.state == .ready
          && !state.failedBuilds.contains(ByteString($0.group))
      }
      if let match = compositeMatch(in: ready) {
        let entries = try runtime.source(
          match.descriptor, at: indexPosition(of: match.descriptor, in: definition), of: definition, in: &state)
        let index = QueryPlan<T>.Indexed(
          name: match.descriptor.name, group: match.descriptor.group, entries: entries)
        composite = (
          match,
          .init(predicate: match.predicate, index: index, entryCount: try entries.count(in: match.predicate.bounds))
        )
      }
      let covered = Set(composite?.match.covered ?? [])
      for (position, predicate) in predicates.enumerated() where !covered.contains(position) {
        if let descriptor = ready.first(where: predicate.canUse) {
          let entries = try runtime.source(
            descriptor, at: indexPosition(of: descriptor, in: definition), of: definition, in: &state)
          let index = QueryPlan<T>.Indexed(
            name: descriptor.name, group: descriptor.group, entries: entries)
          indexed.append(.init(predicate: predicate, index: index, entryCount: try entries.count(in: predicate.bounds)))
        } else {
          plan.residual.append(predicate)
        }
      }
      if let order, composite?.match.ordered != true,
        let descriptor = ready.first(where: {
          !$0.isComposite && $0.keyPath == order.keyPath && $0.kind != .each
        })
      {
        plan.sortIndex = .init(
          name: descriptor.name, group: descriptor.group,
          entries: try runtime.source(
            descriptor, at: indexPosition(of: descriptor, in: definition), of: definition, in: &state))
      }
      // An id's texts through a view come from decoding its object: a plan that looks up many
      // ids (a condition checked per candidate, a sort index walked or sorted by) reads built
      // entries instead, built under the same lock as the views were taken, so all agree.
      let conditions = indexed.count + (composite == nil ? 0 : 1)
      // Closures rather than key paths here and below: a key path into a generic type is made
      // at run time on every call, which cost a page as much as walking a few hundred entries.
      let candidates = composite?.condition.entryCount ?? indexed.map { $0.entryCount }.min() ?? 0
      if candidates > Self.viewLookupLimit, conditions > 1 || (conditions > 0 && plan.sortIndex != nil) {
        func build(_ index: inout QueryPlan<T>.Indexed) throws {
          if case .view = index.entries { index.entries = .memory(try runtime.entries(index.group, in: &state)) }
        }
        for position in indexed.indices { try build(&indexed[position].index) }
        if composite != nil { try build(&composite!.condition.index) }
        if plan.sortIndex != nil { try build(&plan.sortIndex!) }
      }
      // The generation of the entries copied above, read under the same lock: a set of ids
      // kept for it is exactly the ids of that copy.
      for position in indexed.indices {
        guard case .memory = indexed[position].index.entries,
          let box = state.caches[ByteString(indexed[position].index.group)]
        else { continue }
        indexed[position].index.idSets = IDSetCache(runtime: runtime, box: box, generation: box.generation)
      }
    }
    indexed.sort { $0.entryCount < $1.entryCount }
    // A composite index drives whenever it matches: it answers at least as many conditions
    // as any single-field index, in one range of entries.
    if let composite {
      indexed.insert(composite.condition, at: 0)
      if composite.match.ordered { plan.orderedDriverPrefix = composite.match.prefixLength }
    }
    if let first = indexed.first {
      plan.driver = first
      plan.checks = Array(indexed.dropFirst())
    }
    if let sortIndex = plan.sortIndex {
      if let first = indexed.first {
        // Walking the sort index visits about (offset + limit) * n / m entries to find
        // offset + limit of the m candidates; sorting the candidates costs m log m.
        let total = max(1, sortIndex.entries.count)
        let candidates = max(1, first.entryCount)
        if let limitCount, plan.residual.isEmpty, filters.isEmpty {
          // In units of a comparison of a sort: a lookup of an id's texts costs about four
          // (a search of the entries by id), a test of an id against a set of the driver's
          // ids about one, as does putting an id into that set. The sort looks up each
          // candidate's sort text, then compares; the walk visits about
          // (offset + limit) * n / m entries to find offset + limit of the m candidates.
          let walked = Double(offsetCount + limitCount) * Double(total) / Double(candidates)
          let lookups = 4 * Double(plan.checks.count)
          let byLookup = walked * (4 + lookups)
          let bySet = Double(candidates) + walked * (1 + lookups)
          let sort = Double(candidates) * (4 + max(1, log2(Double(candidates))))
          plan.walksSortIndex = min(byLookup, bySet) < sort
          plan.testsDriverByIDs = plan.walksSortIndex && bySet < byLookup
        }
      } else {
        plan.walksSortIndex = true
      }
    }
    return plan
  }

  /// The most ids a plan reading an index through a view looks up one by one (each a read and
  /// a decode of the object) before it builds the entries instead.
  static var viewLookupLimit: Int { 256 }

  /// The first 16 bytes of `text` as two big-endian integers, zero-padded: ordered as the
  /// texts' first 16 bytes are.
  static func prefixKey(_ text: some StringProtocol) -> (UInt64, UInt64) {
    var high: UInt64 = 0
    var low: UInt64 = 0
    var index = 0
    for byte in text.utf8.prefix(16) {
      if index < 8 {
        high |= UInt64(byte) << (56 - 8 * UInt64(index))
      } else {
        low |= UInt64(byte) << (120 - 8 * UInt64(index))
      }
      index += 1
    }
    return (high, low)
  }

  /// Runs `body` with the plan, which is released when `body` returns.
  private func withPlan<R>(_ body: (QueryPlan<T>) throws -> R) throws -> R {
    try body(try makePlan())
  }

  /// Where `descriptor` is among the declared indexes (what their texts are listed by).
  private func indexPosition(of descriptor: IndexDescriptor, in definition: TypedIndexDefinition<T>) -> Int {
    definition.descriptors.firstIndex { $0.name == descriptor.name } ?? 0
  }

  private var needsObjects: Bool { !filters.isEmpty }

  private func accepts(_ object: T, _ plan: QueryPlan<T>) throws -> Bool {
    guard plan.residual.allSatisfy({ $0.matches(object) }) else { return false }
    for filter in filters where try !filter(object) { return false }
    return true
  }

  /// The selected objects' ids with the objects (when `loadObjects`), paged.
  private func run(loadObjects: Bool) throws -> [(id: String, object: T?)] {
    let wanted = limitCount ?? .max
    guard wanted > 0 else { return [] }
    var results: [(id: String, object: T?)] = []
    // The sort text each result had in the index, checked against the object read later.
    var sortTexts: [String: String] = [:]
    let indexedOrder = try withPlan { plan -> Bool in
      let mustTest = !plan.residual.isEmpty || !filters.isEmpty
      // Without conditions on objects the offset is skipped before any id is handed over.
      let skipping = mustTest ? 0 : offsetCount
      var skipped = skipping
      let walked = try forEachOrderedID(plan, skipping: skipping) { id, walkedText in
        var object: T?
        if mustTest {
          guard let key = CaskCollection<T>.parseID(id), let found = try collection.get(id: key) else { return true }
          guard predicates.allSatisfy({ $0.matches(found) }), try accepts(found, plan) else { return true }
          if let order, let text = try walkedText ?? plan.sortText(of: id),
            compareBytes(order.text(found), text) != 0
          {
            return true  // moved in the order since the entries were read
          }
          object = found
        }
        // Without conditions on objects, the offset is skipped in the index: no object read.
        if skipped < offsetCount {
          skipped += 1
          return true
        }
        results.append((id, object))
        if order != nil, object == nil { sortTexts[id] = try (walkedText ?? plan.sortText(of: id)).map(String.init) }
        return results.count < wanted
      }
      return walked
    }
    if indexedOrder {
      // The page's objects are read after the plan is released, so that commits meanwhile do
      // not copy the entries it holds. An object changed since the entries were read is left
      // out if it no longer satisfies every condition or has moved in the order.
      guard loadObjects, results.contains(where: { $0.object == nil }) else { return results }
      return try results.compactMap { result in
        if let object = result.object { return (result.id, object) }
        guard let key = CaskCollection<T>.parseID(result.id), let found = try collection.get(id: key),
          predicates.allSatisfy({ $0.matches(found) }),
          sortTexts[result.id].map({ text in order.map { compareBytes($0.text(found), text) == 0 } ?? true }) ?? true
        else { return nil }
        return (result.id, found)
      }
    }
    let plan = try makePlan()
    // Nothing indexed to walk, or an order without an index: read the candidates (or every
    // object), test them, sort them in memory.
    var matches: [(id: String, object: T)] = []
    if let candidates = try candidateIDs(plan) {
      for id in candidates {
        guard let key = CaskCollection<T>.parseID(id), let object = try collection.get(id: key) else { continue }
        if predicates.allSatisfy({ $0.matches(object) }), try accepts(object, plan) { matches.append((id, object)) }
      }
    } else {
      var failures: [CollectionError] = []
      try collection.forEachObject(onDecodingFailure: .fail, failures: &failures) { object in
        if try accepts(object, plan) { matches.append((object.id.description, object)) }
      }
    }
    if let order {
      let keyed = matches.map { (order.text($0.object), $0) }
      let sorted = keyed.sorted { a, b in
        let byText = compareBytes(a.0, b.0)
        return byText != 0 ? byText < 0 : bytesPrecede(a.1.id, b.1.id)
      }
      matches = order.ascending ? sorted.map { $0.1 } : sorted.reversed().map { $0.1 }
    } else {
      matches.sort { bytesPrecede($0.id, $1.id) }
    }
    let start = min(offsetCount, matches.count)
    let end = start + min(matches.count - start, wanted)
    return matches[start..<end].map { ($0.id, loadObjects ? $0.object : nil) }
  }

  /// The objects the query selects, in its order.
  ///
  /// - Complexity: with an index for the conditions (or the order): O(log n + k) entries
  ///   visited and one read and decode per result; without one, a scan of every object.
  public func fetch() throws -> [T] {
    try run(loadObjects: true).compactMap { $0.object }
  }

  /// The first object the query selects, or `nil`.
  public func first() throws -> T? {
    try limit(1).fetch().first
  }

  /// The ids of the objects the query selects, in its order. With only indexed conditions
  /// (and an indexed order, or none), no object is read.
  public func ids() throws -> [T.ID] {
    try run(loadObjects: false).compactMap { CaskCollection<T>.parseID($0.id) }
  }

  /// How many objects the query selects (after offset and limit). With one indexed condition
  /// and nothing else, it is counted from the index's entries alone.
  ///
  /// - Complexity: O(log n + n / 1,024) for one indexed condition; otherwise as `ids()`.
  public func count() throws -> Int {
    let plan = try makePlan()
    let total: Int?
    if plan.residual.isEmpty, filters.isEmpty {
      // An id has at most one entry in range: a range never uses an `each` index.
      if let driver = plan.driver, plan.checks.isEmpty {
        total = try driver.index.entries.count(in: driver.predicate.bounds)
      } else if plan.driver != nil {
        total = try candidateIDs(plan)?.count
      } else if predicates.isEmpty {
        total = collection.count
      } else {
        total = nil
      }
    } else {
      total = nil
    }
    if let total {
      let afterOffset = max(0, total - offsetCount)
      return limitCount.map { min($0, afterOffset) } ?? afterOffset
    }
    var counting = self
    counting.order = nil
    return try counting.run(loadObjects: false).count
  }
}

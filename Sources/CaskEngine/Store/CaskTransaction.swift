import Foundation

/// A read-modify-write unit: reads see the committed store plus the transaction's own writes,
/// and no other writer can commit between the reads and the commit.
///
/// Obtained from `CaskStore.transaction(_:)`. Do not call the store's own write methods
/// (`put`, `delete`, `batch`, `transaction`) inside the body: writers are serialized, and the
/// body already holds the turn.
public struct CaskTransaction {
  private let store: CaskStore
  private(set) var batch: CaskBatch
  private var pending: [IndexKey: Data?] = [:]

  init(store: CaskStore) {
    self.store = store
    self.batch = CaskBatch(owner: store)
  }

  /// Refuses what belongs to another store than this transaction's (a collection, say),
  /// whose objects would otherwise be read from and written to this store.
  ///
  /// - Throws: `CaskError.invalidKey`.
  package func checkStore(_ other: CaskStore, for what: String) throws {
    try batch.checkStore(other, for: what)
  }

  /// The value of `key` as this transaction sees it.
  public func get(_ key: String) throws -> Data? {
    if let written = pending[IndexKey(key)] { return written }
    return try store.get(key)
  }

  /// Whether `key` exists as this transaction sees it.
  ///
  /// - Complexity: O(1), no disk access.
  public func contains(_ key: String) throws -> Bool {
    if let written = pending[IndexKey(key)] { return written != nil }
    return try store.contains(key)
  }

  /// The keys of a group as this transaction sees them, sorted.
  public func keys(inGroup group: String) throws -> [String] {
    var keys = Set(try store.keys(inGroup: group).map(IndexKey.init))
    // By bytes, as the store tells groups apart: `==` on String would take in the keys of a
    // group whose name differs only in Unicode normalization.
    let wanted = IndexKey(group)
    for (key, value) in pending where KeyDirectory.group(of: key) == wanted {
      if value == nil { keys.remove(key) } else { keys.insert(key) }
    }
    return keys.map(\.string).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
  }

  /// Stores `value` under `key` when the transaction commits.
  public mutating func put(_ value: Data, forKey key: String) throws {
    try batch.put(value, forKey: key)
    pending[IndexKey(key)] = .some(value)
  }

  /// Removes `key` when the transaction commits.
  public mutating func delete(_ key: String) throws {
    try batch.delete(key)
    pending[IndexKey(key)] = .some(nil)
  }
}

extension CaskStore {
  /// Runs `body` with the writers' turn held, then commits its writes as one atomic batch.
  /// Nothing is written if `body` throws.
  ///
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws, and the errors of `batch`.
  /// - Complexity: that of the body's reads plus one batch; other writers wait meanwhile.
  public func transaction<R>(_ body: (inout CaskTransaction) throws -> R) throws -> R {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("transaction")
    let (value, ticket, result) = try writer.withLock { writer -> (R, UInt64, CommitResult) in
      if writer.closed { throw CaskError.closed }
      var transaction = CaskTransaction(store: self)
      let value = try userCode.running { try body(&transaction) }
      var prepared = try prepare(transaction.batch)
      try addHookWrites(for: transaction.batch, to: &prepared)
      guard !prepared.isEmpty else { return (value, writer.ticket, CommitResult()) }
      let (ticket, result) = try append(&prepared, writer: &writer)
      return (value, ticket, result)
    }
    try finishCommit(ticket: ticket, result: result)
    return value
  }

  // MARK: Groups

  /// The keys whose part before the first U+0000 is `group`, sorted by UTF-8 bytes.
  ///
  /// - Complexity: O(m log m) for the m keys of the group, whatever else the store holds.
  public func keys(inGroup group: String) throws -> [String] {
    try state.withLock { state in
      guard !state.closed else { throw CaskError.closed }
      return state.directory.keys(inGroup: group)
    }.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
  }

  /// Every group (for typed collections: every collection name) with its number of keys,
  /// sorted by the names' UTF-8 bytes. Names that differ only in Unicode normalization are
  /// two groups, as everywhere in the store (a `[String: Int]` would merge them).
  ///
  /// - Complexity: O(g log g) for g groups.
  public func groups() -> [GroupCount] {
    state.withLock { $0.directory.groupCounts }.sorted { $0.group.utf8.lexicographicallyPrecedes($1.group.utf8) }
  }

  /// A group and its number of keys.
  public struct GroupCount: Sendable, Hashable {
    public var group: String
    public var count: Int

    public init(group: String, count: Int) {
      self.group = group
      self.count = count
    }
  }

  /// The number of keys in a group.
  ///
  /// - Complexity: O(1).
  public func count(inGroup group: String) -> Int {
    state.withLock { $0.directory.count(inGroup: group) }
  }

  /// Every key of a group with its value, read in file order (sequential I/O).
  ///
  /// - Parameter onDamage: called for a record that fails to authenticate, with its key;
  ///   return normally to skip it, or throw to stop. By default the error is thrown.
  /// - Complexity: O(m) reads and decryptions for the m keys of the group.
  public func entries(
    inGroup group: String, onDamage: (String, CaskError) throws -> Void = { throw $1 }
  ) throws -> [(key: String, value: Data)] {
    var result: [(key: String, value: Data)] = []
    try forEachEntry(inGroup: group, onDamage: onDamage) { result.append(($0, $1)) }
    return result
  }

  /// Calls `body` with every key of a group and its value, one at a time, in file order
  /// (sequential I/O): a value `body` does not keep is not held, and a `body` that throws
  /// stops the reading there. The keys and values are those of the moment of the call, also
  /// when they are overwritten or deleted while `body` runs (their records stay readable).
  ///
  /// - Parameter onDamage: as for `entries(inGroup:onDamage:)`.
  /// - Throws: what `body` or `onDamage` throws, `CaskError.closed`, `.io`.
  /// - Complexity: O(m) reads and decryptions for the m keys of the group, until `body` stops.
  public func forEachEntry(
    inGroup group: String, onDamage: (String, CaskError) throws -> Void = { throw $1 },
    _ body: (_ key: String, _ value: Data) throws -> Void
  ) throws {
    let located = try state.withLock { state -> [(String, RecordLocation, Segment)] in
      guard !state.closed else { throw CaskError.closed }
      return state.directory.entries(inGroup: group).compactMap { entry in
        state.segments[entry.location.segment].map { (entry.key, entry.location, $0) }
      }
    }
    let ordered = located.sorted {
      ($0.2.order, $0.1.offset) < ($1.2.order, $1.1.offset)
    }
    for (key, location, segment) in ordered {
      let value: Data
      do {
        value = try readValue(at: location, in: segment, key: key)
      } catch let error as CaskError {
        guard case .corrupt = error else { throw error }
        try onDamage(key, error)
        continue
      }
      try body(key, value)
    }
  }
}

/// The keys an upsert wrote, counted: inserted when the store did not have the key before
/// the transaction, replaced when it did; a key written twice in one upsert counts once. Keys
/// are told apart by their UTF-8 bytes, as the store keeps them (Swift's `==` takes two
/// canonically equivalent strings, "é" as one code point and as e + accent, for one).
public struct UpsertTally: Sendable {
  public fileprivate(set) var inserted = 0
  public fileprivate(set) var replaced = 0
  fileprivate var seen = Set<[UInt8]>()

  public init() {}
}

extension CaskTransaction {
  /// Stores `value` under `key` when the transaction commits, counted in `tally`.
  public mutating func upsert(_ value: Data, forKey key: String, counting tally: inout UpsertTally) throws {
    if tally.seen.insert(Array(key.utf8)).inserted {
      if try contains(key) { tally.replaced += 1 } else { tally.inserted += 1 }
    }
    try put(value, forKey: key)
  }
}

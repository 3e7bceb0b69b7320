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
      try writer.throwIfClosed()
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
}

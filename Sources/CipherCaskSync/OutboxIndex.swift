import CipherCask
import Foundation

/// Where a collection's outbox keeps its changes, and the bookkeeping that makes queueing and
/// sending cost O(1) per change, whatever the backlog.
///
/// - The queue: key group `__outbox:<collection>`, one key per change, `<group>\0` + its
///   sequence number in 20 zero-padded digits (so key order is queue order), holding the
///   change as JSON (`OutboxEntry`).
/// - The index: key group `__outbox-index:<collection>`, with `<group>\0#tail` (the last
///   sequence number used, as decimal text) and, for each object with changes queued,
///   `<group>\0=<id>` (how many, as decimal text).
///
/// Both are written in the same store transaction as the change they describe, so they never
/// disagree after a crash. A queue written before the index existed has no `#tail` key: the
/// first transaction that touches the queue builds the index from it (once, O(backlog)).
struct OutboxIndex: Sendable {
  let queueGroup: String
  let indexGroup: String

  init(collection: String) {
    queueGroup = "__outbox:" + collection
    indexGroup = "__outbox-index:" + collection
  }

  private static let separator = CaskFormat.keyGroupSeparatorText
  private static let sequenceDigits = 20
  private var tailKey: String { indexGroup + Self.separator + "#tail" }

  private func countKey(_ id: String) -> String {
    indexGroup + Self.separator + "=" + id
  }

  /// The key of the change with `sequence`.
  func entryKey(_ sequence: UInt64) -> String {
    let digits = String(sequence)
    return queueGroup + Self.separator + String(repeating: "0", count: max(0, Self.sequenceDigits - digits.count))
      + digits
  }

  /// The sequence number in a key of the queue, or `nil`.
  static func sequence(ofKey key: String) -> UInt64? {
    guard let separator = key.utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else { return nil }
    return UInt64(key[key.index(after: separator)...])
  }

  // MARK: Changing the queue

  /// Appends `entry` to the queue.
  ///
  /// - Complexity: O(1): two reads and three writes in `transaction`.
  func append(_ entry: OutboxEntry, in transaction: inout CaskTransaction) throws {
    let sequence = try lastSequence(in: &transaction) + 1
    try transaction.put(JSONEncoder().encode(entry), forKey: entryKey(sequence))
    try transaction.put(Data(String(sequence).utf8), forKey: tailKey)
    try adjustCount(of: entry.id, by: 1, in: &transaction)
  }

  /// Removes the change under `key`, a change to the object `id`, if it is still queued.
  ///
  /// - Returns: how many changes to `id` remain queued.
  /// - Complexity: O(1).
  @discardableResult
  func remove(_ key: String, id: String, in transaction: inout CaskTransaction) throws -> Int {
    _ = try lastSequence(in: &transaction)  // builds the index of an older queue first
    guard try transaction.contains(key) else { return try count(of: id, in: transaction) }
    try transaction.delete(key)
    return try adjustCount(of: id, by: -1, in: &transaction)
  }

  // MARK: Reading the queue

  /// The keys of the queued changes with a sequence number above `sequence`, oldest first.
  ///
  /// - Complexity: O(m log m) in memory for the m queued changes; no decryption.
  func keys(after sequence: UInt64, in store: CaskStore) throws -> [(sequence: UInt64, key: String)] {
    try store.keys(inGroup: queueGroup).compactMap { key in
      guard let number = Self.sequence(ofKey: key), number > sequence else { return nil }
      return (number, key)
    }
  }

  /// The change under `key`, or `nil` if it is no longer queued.
  static func entry(_ key: String, in store: CaskStore) throws -> OutboxEntry? {
    guard let data = try store.get(key) else { return nil }
    return try decode(data)
  }

  static func decode(_ data: Data) throws -> OutboxEntry {
    do {
      return try JSONDecoder().decode(OutboxEntry.self, from: data)
    } catch {
      throw SyncError.decoding("a queued change does not decode")
    }
  }

  /// Whether any change is queued, in `transaction`; for a queue written before the index
  /// existed, builds the index first, so that `queuedCount(of:in:)` reads it right.
  ///
  /// - Complexity: O(m log m) in memory for the m queued changes (listing their keys).
  func hasQueue(in transaction: inout CaskTransaction) throws -> Bool {
    guard try !transaction.keys(inGroup: queueGroup).isEmpty else { return false }
    _ = try lastSequence(in: &transaction)
    return true
  }

  /// How many changes to `id` are queued, in a transaction after `hasQueue(in:)`.
  ///
  /// - Complexity: O(1).
  func queuedCount(of id: String, in transaction: CaskTransaction) throws -> Int {
    try count(of: id, in: transaction)
  }

  /// How many changes to `id` are queued, read from `store`.
  ///
  /// - Complexity: O(1); for a queue written before the index existed, O(m) reads and decodes.
  func queuedCount(of id: String, in store: CaskStore) throws -> Int {
    if try store.get(tailKey) != nil {
      return try store.get(countKey(id)).map { try Self.number(in: $0) }.map(Int.init) ?? 0
    }
    return try store.keys(inGroup: queueGroup).reduce(0) { total, key in
      guard let data = try store.get(key) else { return total }
      return total + (try Self.decode(data).id == id ? 1 : 0)
    }
  }

  // MARK: Bookkeeping

  /// How many changes to `id` are queued.
  private func count(of id: String, in transaction: CaskTransaction) throws -> Int {
    try transaction.get(countKey(id)).map { try Self.number(in: $0) }.map(Int.init) ?? 0
  }

  @discardableResult
  private func adjustCount(of id: String, by delta: Int, in transaction: inout CaskTransaction) throws -> Int {
    let count = max(0, try self.count(of: id, in: transaction) + delta)
    if count == 0 {
      if try transaction.contains(countKey(id)) { try transaction.delete(countKey(id)) }
    } else {
      try transaction.put(Data(String(count).utf8), forKey: countKey(id))
    }
    return count
  }

  /// The last sequence number used, building the index first if the queue has none.
  private func lastSequence(in transaction: inout CaskTransaction) throws -> UInt64 {
    if let data = try transaction.get(tailKey) { return try Self.number(in: data) }
    var last: UInt64 = 0
    var counts: [String: Int] = [:]
    for key in try transaction.keys(inGroup: queueGroup) {
      guard let sequence = Self.sequence(ofKey: key), let data = try transaction.get(key) else { continue }
      last = max(last, sequence)
      counts[try Self.decode(data).id, default: 0] += 1
    }
    for (id, count) in counts { try transaction.put(Data(String(count).utf8), forKey: countKey(id)) }
    try transaction.put(Data(String(last).utf8), forKey: tailKey)
    return last
  }

  private static func number(in data: Data) throws -> UInt64 {
    guard let number = UInt64(String(decoding: data, as: UTF8.self)) else {
      throw SyncError.decoding("the outbox's index is damaged")
    }
    return number
  }
}

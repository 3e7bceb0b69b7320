import CaskEngine
import Foundation

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

extension CaskStreamedBatch {
  /// Stores `value` under `key` when the batch commits, counted in `tally`. Needs no memory
  /// of its own for the keys seen: the batch knows which it wrote.
  public mutating func upsert(_ value: Data, forKey key: String, counting tally: inout UpsertTally) throws {
    let existed = try contains(key)
    // The first write of a key in this batch: `existed` is then the store's answer.
    if try put(value, forKey: key) {
      if existed { tally.replaced += 1 } else { tally.inserted += 1 }
    }
  }
}

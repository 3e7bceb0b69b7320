import Foundation

/// The writes of one atomic batch: after a crash, all of them are in the store or none is.
///
/// Operations apply in order; for a key written more than once, the last operation wins.
public struct CaskBatch: Sendable {
  enum Operation: Sendable {
    case put(key: String, value: Data)
    case delete(key: String)

    var key: String {
      switch self {
      case .put(let key, _), .delete(let key): return key
      }
    }
  }

  /// The operations: one alone (a single put or delete) is kept without an array.
  /// Prevents: an array allocated, filled and destroyed around every single put.
  private enum Storage: Sendable {
    case one(Operation)
    case many([Operation])
  }

  private var storage = Storage.many([])

  /// The operations, in order. For one operation this builds an array: the paths that run
  /// for every single put ask `only` first.
  var operations: [Operation] {
    switch storage {
    case .one(let operation): return [operation]
    case .many(let operations): return operations
    }
  }

  /// The operation when the batch holds exactly one.
  var only: Operation? {
    switch storage {
    case .one(let operation): return operation
    case .many(let operations): return operations.count == 1 ? operations[0] : nil
    }
  }
  /// The store whose `batch(_:)` made this batch (`nil` for the one-key batches of `put` and
  /// `delete`): what `checkStore(_:)` compares with.
  private let owner: ObjectIdentifier?

  init(owner: CaskStore? = nil) {
    self.owner = owner.map(ObjectIdentifier.init)
  }

  /// A batch of one operation, already checked (`CaskStore.put` and `delete`).
  init(single operation: Operation) {
    self.owner = nil
    self.storage = .one(operation)
  }

  private mutating func append(_ operation: Operation) {
    switch storage {
    case .one(let first):
      storage = .many([first, operation])
    case .many(var operations):
      // Emptied first, so that the array is not shared while it grows (no copy).
      storage = .many([])
      operations.append(operation)
      storage = .many(operations)
    }
  }

  /// Throws unless `store` is the store this batch commits to: for layers above (a typed
  /// collection) whose objects name their own store, so that an object meant for one store
  /// does not land in another.
  ///
  /// - Throws: `CaskError.invalidKey`.
  package func checkStore(_ store: CaskStore, for what: String) throws {
    guard owner == nil || owner == ObjectIdentifier(store) else {
      throw CaskError.invalidKey(reason: "\(what) belongs to another store than this batch or transaction")
    }
  }

  /// Stores `value` under `key` when the batch commits.
  ///
  /// - Throws: `CaskError.invalidKey`, `CaskError.valueTooLarge` (checked at once).
  public mutating func put(_ value: Data, forKey key: String) throws {
    try CaskStore.validate(key: key)
    try CaskStore.validate(value: value)
    append(.put(key: key, value: value))
  }

  /// Removes `key` when the batch commits (nothing is written if it does not exist).
  ///
  /// - Throws: `CaskError.invalidKey`.
  public mutating func delete(_ key: String) throws {
    try CaskStore.validate(key: key)
    append(.delete(key: key))
  }

  /// Number of operations recorded so far.
  public var count: Int {
    switch storage {
    case .one: return 1
    case .many(let operations): return operations.count
    }
  }
}

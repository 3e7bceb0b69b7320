import Foundation

extension CaskCollection {
  /// Reads the object with `id`, lets `mutate` change it, and saves it, with no other writer
  /// able to commit in between (no lost updates).
  ///
  /// - Returns: the saved object, or `nil` if there is no object with `id` (nothing is written).
  /// - Throws: what `mutate` throws (nothing is written), `CollectionError.decoding`, store errors.
  ///   Changing the object's `id` inside `mutate` is an error (`CaskError.invalidKey`).
  @discardableResult
  public func update(id: T.ID, _ mutate: (inout T) throws -> Void) throws -> T? {
    let key = try key(for: id)
    return try store.transaction { transaction -> T? in
      guard let data = try transaction.get(key) else { return nil }
      var object = try decode(data, id: id.description)
      try mutate(&object)
      guard Self.sameKey(object.id, id) else {
        throw CaskError.invalidKey(reason: "update must not change an object's id")
      }
      try transaction.put(encode(object), forKey: key)
      return object
    }
  }

  /// Applies `mutate` to every object matching `predicate`, all in one atomic batch.
  ///
  /// - Returns: how many objects were updated.
  /// - Complexity: O(n) reads and decodes, O(m) encodes for the m matches; other writers wait.
  @discardableResult
  public func updateAll(where predicate: (T) throws -> Bool, _ mutate: (inout T) throws -> Void) throws -> Int {
    try checkName()
    return try store.transaction { transaction in
      var updated = 0
      for key in try transaction.keys(inGroup: name) {
        guard let data = try transaction.get(key) else { continue }
        var object = try decode(data, id: Self.idString(fromKey: key))
        guard try predicate(object) else { continue }
        let id = object.id.description
        try mutate(&object)
        guard Self.sameKey(object.id, id) else {
          throw CaskError.invalidKey(reason: "updateAll must not change an object's id")
        }
        try transaction.put(encode(object), forKey: key)
        updated += 1
      }
      return updated
    }
  }

  /// Deletes every object matching `predicate`, in one atomic batch.
  ///
  /// - Returns: how many objects were deleted.
  @discardableResult
  public func deleteAll(where predicate: (T) throws -> Bool) throws -> Int {
    try checkName()
    return try store.transaction { transaction in
      var deleted = 0
      for key in try transaction.keys(inGroup: name) {
        guard let data = try transaction.get(key) else { continue }
        guard try predicate(decode(data, id: Self.idString(fromKey: key))) else { continue }
        try transaction.delete(key)
        deleted += 1
      }
      return deleted
    }
  }

  /// Upserts `objects` in one atomic batch, counting inserts and replacements.
  @discardableResult
  public func upsert<S: Sequence<T>>(_ objects: S) throws -> ImportResult {
    try checkName()
    return try store.transaction { transaction in
      var tally = UpsertTally()
      for object in objects {
        try transaction.upsert(encode(object), forKey: key(for: object.id), counting: &tally)
      }
      return ImportResult(inserted: tally.inserted, replaced: tally.replaced)
    }
  }
}

extension CaskBatch {
  /// Saves `object` into `collection` when the batch commits (spanning collections).
  ///
  /// - Throws: `CaskError.invalidKey` also when `collection` is of another store than the
  ///   batch: the object would otherwise land in this batch's store.
  public mutating func save<T>(_ object: T, in collection: CaskCollection<T>) throws {
    try checkStore(collection.store, for: "collection '\(collection.name)'")
    try put(collection.encode(object), forKey: collection.key(for: object.id))
  }

  /// Deletes the object with `id` from `collection` when the batch commits.
  ///
  /// - Throws: as `save(_:in:)`.
  public mutating func delete<T>(id: T.ID, from collection: CaskCollection<T>) throws {
    try checkStore(collection.store, for: "collection '\(collection.name)'")
    try delete(collection.key(for: id))
  }
}

extension CaskTransaction {
  /// The object with `id` in `collection` as this transaction sees it: the store's, or what
  /// the transaction saved or deleted before. No other writer can change it until the
  /// transaction commits.
  ///
  /// - Throws: `CollectionError.decoding` if it no longer decodes as `T`; `CaskError.invalidKey`
  ///   when `collection` is of another store than the transaction.
  public func get<T>(id: T.ID, from collection: CaskCollection<T>) throws -> T? {
    try checkStore(collection.store, for: "collection '\(collection.name)'")
    guard let data = try get(collection.key(for: id)) else { return nil }
    return try collection.decode(data, id: id.description)
  }

  /// Saves `object` into `collection` when the transaction commits.
  ///
  /// - Throws: as `get(id:from:)`, and `EncodingError`.
  public mutating func save<T>(_ object: T, in collection: CaskCollection<T>) throws {
    try checkStore(collection.store, for: "collection '\(collection.name)'")
    try put(collection.encode(object), forKey: collection.key(for: object.id))
  }

  /// Deletes the object with `id` from `collection` when the transaction commits.
  ///
  /// - Throws: as `get(id:from:)`.
  public mutating func delete<T>(id: T.ID, from collection: CaskCollection<T>) throws {
    try checkStore(collection.store, for: "collection '\(collection.name)'")
    try delete(collection.key(for: id))
  }
}

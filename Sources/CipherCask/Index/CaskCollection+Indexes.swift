import Foundation

extension CaskStore {
  /// The collection of `type` named `name`, with secondary indexes.
  ///
  /// Declaring is cheap: nothing is read or built on the calling thread (the collection's
  /// catalogue of indexes is read on a background thread, for the first save or query to
  /// find). An index the store does not hold yet
  /// (or holds with another definition) is built by `buildIndexes(progress:)`, or by the first
  /// query that needs it; until then queries scan, and writes already keep it.
  public func collection<T: Codable & Identifiable & Sendable>(
    _ type: T.Type, named name: String, coder: any CaskCoder = BinaryCaskCoder(), indexes: [CaskIndex<T>]
  ) -> CaskCollection<T> where T.ID: LosslessStringConvertible & Sendable {
    let collection = CaskCollection<T>(store: self, name: name, coder: coder)
    collection.declare(indexes)
    return collection
  }

  /// The collection of `type` named after the type, with secondary indexes.
  public func collection<T: Codable & Identifiable & Sendable>(
    _ type: T.Type, coder: any CaskCoder = BinaryCaskCoder(), indexes: [CaskIndex<T>]
  ) -> CaskCollection<T> where T.ID: LosslessStringConvertible & Sendable {
    let collection = CaskCollection<T>(store: self, namedAfterTypeWith: coder)
    collection.declare(indexes)
    return collection
  }

  /// The collection of `type`, whose ids are `UUID`s, named `name`, with secondary indexes.
  public func collection<T: Codable & Identifiable & Sendable>(
    _ type: T.Type, named name: String, coder: any CaskCoder = BinaryCaskCoder(), indexes: [CaskIndex<T>]
  ) -> CaskCollection<T> where T.ID == UUID {
    let collection = CaskCollection<T>(store: self, name: name, coder: coder)
    collection.declare(indexes)
    return collection
  }

  /// The collection of `type`, whose ids are `UUID`s, named after the type, with secondary
  /// indexes.
  public func collection<T: Codable & Identifiable & Sendable>(
    _ type: T.Type, coder: any CaskCoder = BinaryCaskCoder(), indexes: [CaskIndex<T>]
  ) -> CaskCollection<T> where T.ID == UUID {
    let collection = CaskCollection<T>(store: self, namedAfterTypeWith: coder)
    collection.declare(indexes)
    return collection
  }
}

/// How far an index build has come.
public struct IndexBuildProgress: Sendable, Equatable {
  /// The index being built.
  public var index: String
  /// Objects done so far, of `total`.
  public var done: Int
  public var total: Int
}

extension CaskCollection {
  func declare(_ indexes: [CaskIndex<T>]) {
    guard (try? checkName()) != nil else { return }
    IndexRuntime.of(store).register(TypedIndexDefinition(collection: name, coder: coder, indexes: indexes))
  }

  /// The declared indexes of this collection (through any collection value of its name and
  /// type in this process), or `nil`.
  var indexDefinition: TypedIndexDefinition<T>? {
    guard (try? checkName()) != nil else { return nil }
    return IndexRuntime.of(store).definition(of: name) as? TypedIndexDefinition<T>
  }

  /// The names of the indexes queries can use now (complete, of the declared definition).
  ///
  /// - Complexity: O(1) after the catalogue was read once.
  public func readyIndexes() throws -> [String] {
    guard let definition = indexDefinition else { return [] }
    let runtime = IndexRuntime.of(store)
    return try runtime.state.withLock { state in
      let catalog = try runtime.catalog(name, in: &state)
      return definition.descriptors.filter { catalog[$0.name]?.hash == $0.hash && catalog[$0.name]?.state == .ready }
        .map(\.name)
    }
  }

  /// Builds every declared index that the store does not hold complete with its current
  /// definition: a new index, one whose definition changed (its old entries are removed), or
  /// one whose build was cut short (it starts again). Objects are read in chunks of
  /// `chunkSize`, each chunk one atomic commit; other writers go on between chunks and keep
  /// the index being built. A half-built index is never used by queries.
  ///
  /// - Parameter progress: called after each chunk.
  /// - Returns: the names of the indexes built.
  /// - Throws: `CollectionError.uniqueViolation` when stored objects already share a value of
  ///   a unique index (the index stays unusable; queries scan); store and decoding errors.
  /// - Complexity: O(n) reads and decodes for the n objects, per index built.
  @discardableResult
  public func buildIndexes(
    chunkSize: Int = 1_000, progress: ((IndexBuildProgress) -> Void)? = nil
  ) throws -> [String] {
    try checkName()
    guard let definition = indexDefinition else { return [] }
    if let reason = definition.invalidReason { throw CollectionError.invalidIndex(collection: name, reason: reason) }
    let runtime = IndexRuntime.of(store)
    var built: [String] = []
    for (position, descriptor) in definition.descriptors.enumerated() {
      let needed = try runtime.state.withLock { state -> Bool in
        let entry = try runtime.catalog(name, in: &state)[descriptor.name]
        return entry?.hash != descriptor.hash || entry?.state != .ready
      }
      guard needed else { continue }
      try build(descriptor, at: position, of: definition, chunkSize: max(1, chunkSize), progress: progress)
      built.append(descriptor.name)
    }
    return built
  }

  /// Does now what the first save or query after opening would otherwise pay for: builds the
  /// declared indexes the store does not hold complete (`buildIndexes`), then loads every
  /// declared index's entries into memory. A save keeps the in-memory entries of each index
  /// current, so without this the first save of a stored object after open loads them all
  /// (proportional to the index entries: hundreds of milliseconds for 100,000 objects with five
  /// indexes; a new object's save loads only the unique ones), and every later save costs what
  /// saves cost. Call it (or its `async` form) at launch, off the main
  /// thread.
  ///
  /// - Throws: as `buildIndexes`; `CollectionError.invalidIndex` for a declaration that
  ///   cannot be used.
  /// - Complexity: O(e) for the e entries of the declared indexes, plus the builds.
  public func prepareIndexes() throws {
    try checkName()
    guard let definition = indexDefinition else { return }
    if let reason = definition.invalidReason { throw CollectionError.invalidIndex(collection: name, reason: reason) }
    if !store.options.readOnly { try buildIndexes() }
    let runtime = IndexRuntime.of(store)
    try runtime.state.withLock { state in
      _ = try runtime.catalog(name, in: &state)
      for descriptor in definition.descriptors { _ = try runtime.entries(descriptor.group, in: &state) }
    }
  }

  private func build(
    _ descriptor: IndexDescriptor, at position: Int, of definition: TypedIndexDefinition<T>, chunkSize: Int,
    progress: ((IndexBuildProgress) -> Void)?
  ) throws {
    let runtime = IndexRuntime.of(store)
    // 1. Say "building" (so a crash from here on restarts the build), and remove the entries
    //    of the index's earlier definitions.
    try setCatalogState(descriptor, .building)
    let oldGroups = store.groups().map(\.group).filter {
      IndexStoreKeys.isGroup($0, ofIndex: descriptor.name, collection: name)
        && ByteString($0) != ByteString(descriptor.group)
    }
    for group in oldGroups { try removeKeys(inGroup: group, chunkSize: chunkSize * 4) }
    // 2. Every object, a chunk per commit: its entries as the object now is.
    let keys = try store.keys(inGroup: name)
    var done = 0
    while done < keys.count {
      let chunk = keys[done..<min(keys.count, done + chunkSize)]
      try store.transaction { transaction in
        for key in chunk {
          let id = Self.idString(fromKey: key)
          // An object that does not decode fails the build (the index stays "building", so
          // queries scan, and the scan throws the same decoding error): leaving it out would
          // make the index, and every query that uses it, silently short.
          let new = try transaction.get(key).map { try definition.texts(from: $0, id: id)[position] } ?? []
          let old = try runtime.state.withLock { state in
            try runtime.entries(descriptor.group, in: &state).texts(of: id)
          }
          for text in old where !new.contains(where: { compareBytes($0, text) == 0 }) {
            try transaction.delete(runtime.entryKey(descriptor, text, id, name))
          }
          for text in new where !old.contains(where: { compareBytes($0, text) == 0 }) {
            try transaction.put(Data(), forKey: runtime.entryKey(descriptor, text, id, name))
          }
        }
      }
      done += chunk.count
      progress?(IndexBuildProgress(index: descriptor.name, done: done, total: keys.count))
    }
    // 3. Entries of ids that are no objects, the unique check, and "ready", in one commit.
    try store.transaction { transaction in
      let entries = try runtime.state.withLock { state in try runtime.entries(descriptor.group, in: &state) }
      try entries.forEachID { id, texts in
        guard try !transaction.contains(name + Self.separator + id) else { return }
        for text in texts { try transaction.delete(runtime.entryKey(descriptor, String(text), id, name)) }
      }
      if descriptor.isUnique {
        var previous: (text: Substring, id: Substring)?
        try entries.forEachEntry { text, id in
          if let previous, previous.text.utf8.elementsEqual(text.utf8),
            !(descriptor.isOptional && text == "0"),
            try transaction.contains(name + Self.separator + previous.id),
            try transaction.contains(name + Self.separator + id)
          {
            runtime.state.withLock { _ = $0.failedBuilds.insert(ByteString(descriptor.group)) }
            throw CollectionError.uniqueViolation(collection: name, index: descriptor.name)
          }
          previous = (text, id)
        }
      }
      var catalog = try runtime.state.withLock { state in try runtime.catalog(name, in: &state) }
      catalog.set(descriptor.catalogEntry(state: .ready))
      try transaction.put(catalog.encoded(), forKey: IndexStoreKeys.catalogKey(collection: name))
    }
    runtime.state.withLock { _ = $0.failedBuilds.remove(ByteString(descriptor.group)) }
  }

  private func setCatalogState(_ descriptor: IndexDescriptor, _ newState: IndexCatalog.State) throws {
    let runtime = IndexRuntime.of(store)
    try store.transaction { transaction in
      var catalog = try runtime.state.withLock { state in try runtime.catalog(name, in: &state) }
      catalog.set(descriptor.catalogEntry(state: newState))
      try transaction.put(catalog.encoded(), forKey: IndexStoreKeys.catalogKey(collection: name))
    }
  }

  private func removeKeys(inGroup group: String, chunkSize: Int) throws {
    let keys = try store.keys(inGroup: group)
    var start = 0
    while start < keys.count {
      let chunk = keys[start..<min(keys.count, start + chunkSize)]
      try store.batch { batch in for key in chunk { try batch.delete(key) } }
      start += chunk.count
    }
    IndexRuntime.of(store).state.withLock { _ = $0.caches.removeValue(forKey: ByteString(group)) }
  }

  /// Removes the stored index `index` of this collection: its entries and its catalogue
  /// record. For an index no longer declared; a declared one is built again when next needed.
  ///
  /// - Throws: `CollectionError.indexNotDeclared` when the store holds no such index.
  /// - Complexity: O(m) deletes for its m entries, in chunks of 4,000 per commit.
  public func dropIndex(_ index: String) throws {
    try checkName()
    let runtime = IndexRuntime.of(store)
    let groups = store.groups().map(\.group).filter { IndexStoreKeys.isGroup($0, ofIndex: index, collection: name) }
    let catalogued = try runtime.state.withLock { state in try runtime.catalog(name, in: &state)[index] != nil }
    guard catalogued || !groups.isEmpty else { throw CollectionError.indexNotDeclared(collection: name, index: index) }
    // The catalogue first: a crash part-way leaves entries that no catalogue trusts.
    try store.transaction { transaction in
      var catalog = try runtime.state.withLock { state in try runtime.catalog(name, in: &state) }
      catalog.remove(index)
      try transaction.put(catalog.encoded(), forKey: IndexStoreKeys.catalogKey(collection: name))
    }
    for group in groups { try removeKeys(inGroup: group, chunkSize: 4_000) }
  }

  /// Builds the indexes a query may use, unless the store cannot be written now (read-only,
  /// or called from a transaction body or an observer): then queries scan.
  func prepareIndexesForQuery() {
    guard let definition = indexDefinition, definition.invalidReason == nil, !store.options.readOnly else { return }
    let runtime = IndexRuntime.of(store)
    let needed =
      (try? runtime.state.withLock { state -> Bool in
        let catalog = try runtime.catalog(name, in: &state)
        return definition.descriptors.contains { descriptor in
          guard !state.failedBuilds.contains(ByteString(descriptor.group)) else { return false }
          return catalog[descriptor.name]?.hash != descriptor.hash || catalog[descriptor.name]?.state != .ready
        }
      }) ?? false
    guard needed else { return }
    do {
      try buildIndexes()
    } catch {
      // A unique violation among stored objects is remembered in `failedBuilds`; everything
      // else (a reentrant call, a closed store) leaves the query to scan.
    }
  }
}

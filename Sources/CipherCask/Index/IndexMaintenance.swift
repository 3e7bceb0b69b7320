import Foundation

/// One object a commit writes in a collection with declared indexes: its id, its store key
/// (`collection + U+0000 + id`, which its attached keys name) and its index texts, `nil` for
/// a delete.
struct IndexedObject {
  var id: String
  var key: String
  var texts: [[String]]?
}

/// The objects a commit writes in one collection with declared indexes, each id once (its last
/// write wins).
struct IndexedGroup {
  /// The most ids found by comparing bytes; beyond, they are looked up in `positions`.
  static let scanLimit = 8

  let collection: ByteString
  private(set) var objects: [IndexedObject] = []
  /// Each id's place in `objects`, made once they are more than `scanLimit`. Prevents: a
  /// dictionary made, and the id hashed byte by byte, for the one object of a save.
  private var positions: [ByteString: Int]?

  init(collection: ByteString) { self.collection = collection }

  /// The place in `objects` of the object whose id has the bytes of `id`, if it is there.
  func position<S: StringProtocol>(of id: S) -> Int? {
    if let positions { return positions[ByteString(String(id))] }
    return withUTF8Bytes(id) { id in
      objects.firstIndex { object in withUTF8Bytes(object.id) { compareRaw($0, id) == 0 } }
    }
  }

  /// Whether the commit writes the object with id `id`.
  func writes<S: StringProtocol>(id: S) -> Bool { position(of: id) != nil }

  /// Records the texts of the object `id` with key `key`, replacing those of an earlier write.
  mutating func set(id: Substring, key: String, texts: [[String]]?) {
    if let position = position(of: id) {
      objects[position].texts = texts
      return
    }
    objects.append(IndexedObject(id: String(id), key: key, texts: texts))
    if positions != nil {
      positions?[ByteString(objects[objects.count - 1].id)] = objects.count - 1
    } else if objects.count > Self.scanLimit {
      var table: [ByteString: Int] = [:]
      table.reserveCapacity(objects.count * 2)
      for (position, object) in objects.enumerated() { table[ByteString(object.id)] = position }
      positions = table
    }
  }
}

/// The objects a commit writes in collections with declared indexes: their final index texts
/// per collection and id (the last write of a key wins); `nil` texts for a delete. An object
/// that does not decode as the declared type fails the commit. What a streamed batch keeps of
/// its objects.
struct IndexedChanges {
  /// One group per collection, in the order of their first writes. A commit writes to one or
  /// a few collections: each is found by comparing names. Prevents: the name hashed byte by
  /// byte for every lookup (three per written object).
  var groups: [IndexedGroup] = []

  /// Collections written without declared indexes.
  var undeclared: Set<ByteString> = []

  mutating func add(_ write: CommitWrite, definitions: [ByteString: any IndexedDefinition]) throws {
    guard write.key.utf8.first != IndexStoreKeys.reservedPrefix, let (group, id) = IndexStoreKeys.splitKey(write.key)
    else { return }
    guard let definition = Self.definition(named: group, in: definitions) else {
      undeclared.insert(ByteString(group))
      return
    }
    // Prevents: every save into a collection declared with no index decoding its object for
    // no entry (about a third of such a save).
    let texts =
      definition.descriptors.isEmpty
      ? write.value.map { _ in [] }
      : try write.value.map { try definition.texts(from: $0, id: String(id)) }
    let at = withUTF8Bytes(group) { group in
      groups.firstIndex { withUTF8Bytes($0.collection.string) { compareRaw($0, group) == 0 } }
    }
    if let at {
      groups[at].set(id: id, key: write.key, texts: texts)
    } else {
      var new = IndexedGroup(collection: ByteString(group))
      new.set(id: id, key: write.key, texts: texts)
      groups.append(new)
    }
  }

  /// The definition of the collection `name` in `definitions`: the few declared names compared
  /// as bytes, a lookup beyond (as `IndexRuntime.State.declares`).
  static func definition<S: StringProtocol>(named name: S, in definitions: [ByteString: any IndexedDefinition])
    -> (any IndexedDefinition)?
  {
    guard definitions.count <= 8 else { return definitions[ByteString(String(name))] }
    return withUTF8Bytes(name) { name in
      definitions.first { withUTF8Bytes($0.key.string) { compareRaw($0, name) == 0 } }?.value
    }
  }
}

/// The commit hook of one streamed batch: gathers each write's index texts as it comes and
/// adds the index writes (and the unique checks) at the end, as `commitWrites` does for a batch.
final class StreamedIndexHook: StreamedCommitHook {
  private let runtime: IndexRuntime
  private let definitions: [ByteString: any IndexedDefinition]
  private var changes = IndexedChanges()

  init?(runtime: IndexRuntime) {
    let definitions = runtime.state.withLock { $0.definitions }
    guard !definitions.isEmpty else { return nil }
    self.runtime = runtime
    self.definitions = definitions
  }

  func add(_ write: CommitWrite) throws {
    try changes.add(write, definitions: definitions)
  }

  func finish() throws -> [CommitWrite] {
    try runtime.state.withLock { state in
      // Prevents: objects of a collection whose indexes were declared while the batch ran
      // committed without their entries (they were gathered without the declaration).
      for name in changes.undeclared {
        if let definition = state.definitions[name] {
          throw CollectionError.invalidIndex(
            collection: definition.collection, reason: "indexes were declared while a streamed batch wrote to it")
        }
      }
      // Records already written carry no attached keys: the entries go in as records of their own.
      return try runtime.entryWrites(for: changes, attaching: false, state: &state).writes
    }
  }
}

extension IndexRuntime {
  /// The commit hook: for every object a commit writes in a collection with declared indexes,
  /// all its index keys attached to its own record (one record per object write, Docs/FORMAT.md
  /// "Version 5: attached keys"), and the deletes of the entries it no longer has (which the
  /// engine writes as tombstones only for entries that are records of their own), in the same
  /// atomic batch. Runs under the writer lock, so the in-memory entries are exactly the
  /// store's before this commit.
  ///
  /// - Throws: `CollectionError.uniqueViolation` when two objects would share a value of a
  ///   unique index (the commit then writes nothing); `.invalidIndex`; `.indexValueTooLong`.
  func commitWrites(for writes: [CommitWrite]) throws -> CommitAdditions {
    var changes = IndexedChanges()
    return try state.withLock { state -> CommitAdditions in
      guard !state.definitions.isEmpty else { return CommitAdditions() }
      for write in writes { try changes.add(write, definitions: state.definitions) }
      return try entryWrites(for: changes, attaching: true, state: &state)
    }
  }

  /// The index writes for the objects `changes` gathered, checked for unique violations.
  ///
  /// - Parameter attaching: whether each written object's entries go into its own record
  ///   (as its attached keys) instead of puts of their own.
  func entryWrites(for changes: IndexedChanges, attaching: Bool, state: inout State) throws -> CommitAdditions {
    var added = CommitAdditions()
    for group in changes.groups {
      guard let definition = IndexedChanges.definition(named: group.collection.string, in: state.definitions)
      else { continue }
      if let reason = definition.invalidReason {
        throw CollectionError.invalidIndex(collection: definition.collection, reason: reason)
      }
      try addEntryWrites(for: group, of: definition, attaching: attaching, state: &state, into: &added)
    }
    return added
  }

  private func addEntryWrites(
    for group: IndexedGroup, of definition: any IndexedDefinition, attaching: Bool, state: inout State,
    into additions: inout CommitAdditions
  ) throws {
    let objects = group.objects
    var added: [CommitWrite] = []
    defer { additions.writes += added }
    let name = definition.collection
    var catalog = try self.catalog(name, in: &state)
    var catalogChanged = false
    // Indexes stored but no longer declared stop being kept from here on: say so in the same
    // commit, so that a later declaration rebuilds them instead of trusting old entries.
    if !state.staleMarked.contains(ByteString(name)) {
      for entry in catalog.indexes where entry.state != .stale {
        let declared = definition.descriptors.contains { $0.name == entry.name && $0.hash == entry.hash }
        if !declared {
          var stale = entry
          stale.state = .stale
          catalog.set(stale)
          catalogChanged = true
        }
      }
      state.staleMarked.insert(ByteString(name))
    }
    let descriptors = definition.descriptors
    // An index that no object has yet is complete once this commit's entries are written. The
    // store is asked whether the collection is empty only when an index is not marked ready
    // already (the catalogue's entries read in place). Prevents: the collection's group looked
    // up in the store, its name hashed under the store's lock, on every save into a collection
    // whose indexes are all ready, where the answer changes nothing.
    let allReady = descriptors.allSatisfy { descriptor in
      guard let at = catalog.indexes.firstIndex(where: { $0.name == descriptor.name }) else { return false }
      return catalog.indexes[at].hash == descriptor.hash && catalog.indexes[at].state == .ready
    }
    let wasEmpty = try !allReady && store.count(inGroup: name) == 0
    // An object the store does not hold has no entries: every write of an indexed collection
    // keeps them, a delete drops them with the object's record, and an index whose writes
    // were not kept is marked stale and rebuilt before it is used. So a new object's old texts
    // are not looked up. Prevents: a search of each index's by-id order per new object (a
    // twelfth of the hook's work on a save with three indexes), for one lookup of its key.
    let stored = descriptors.isEmpty ? [] : try objects.map { try store.contains($0.key) }
    let anyStored = stored.contains(true)
    // Each written object's attached keys, gathered over the indexes and handed over once,
    // as their groups and texts. Prevents: the owner's key made, hashed and looked up again
    // for every index, and each entry's key joined into a string the engine splits again.
    // Each set made with room for one key per index (more for `each:`). Prevents: the array
    // grown from nothing by its first appends on every save.
    let room = descriptors.count
    var attached: [[AttachedEntry]?] = objects.map { object in
      guard attaching, object.texts != nil else { return nil }
      var entries: [AttachedEntry] = []
      entries.reserveCapacity(room)
      return entries
    }
    defer {
      for number in objects.indices {
        // An object with no entry attaches nothing (its record then carries no section, which
        // drops what the record it replaces carried), as a save without indexes.
        if let entries = attached[number], !entries.isEmpty { additions.entries.append((objects[number].key, entries)) }
      }
    }
    for (position, descriptor) in descriptors.enumerated() {
      if wasEmpty, catalog[descriptor.name].map({ $0.hash != descriptor.hash || $0.state != .ready }) ?? true {
        catalog.set(descriptor.catalogEntry(state: .ready))
        catalogChanged = true
      }
      // The entries are read only for old texts or a unique check. Prevents: each index's
      // entries looked up by their group's name (hashed byte by byte) and copied for a commit
      // of new objects.
      if anyStored || descriptor.isUnique {
        let entries = try source(descriptor, at: position, of: definition, in: &state)
        for (number, object) in objects.enumerated() where stored[number] {
          let new = object.texts?[position] ?? []
          for text in try oldTexts(of: object.id, in: entries, descriptor, &state)
          where !new.contains(where: { compareBytes($0, text) == 0 }) {
            added.append(CommitWrite(key: try entryKey(descriptor, text, object.id, name), value: nil))
          }
        }
        if descriptor.isUnique {
          try checkUnique(
            descriptor, position: position, group: group, entries: entries, name)
        }
      }
      // The objects read in place, by position. Prevents: each object (two strings and its
      // texts) copied, retained and released, once per index.
      for number in objects.indices {
        // A delete has no texts, and so no entry to write.
        guard let texts = objects[number].texts else { continue }
        if attached[number] != nil {
          // The whole set, every time: the engine replaces the set the old record carried.
          for text in texts[position] {
            try checkEntryLength(descriptor, text, objects[number].id, name)
            attached[number]?.append(AttachedEntry(group: descriptor.group, text: text))
          }
          continue
        }
        // Every entry of a written object, also one it had: the record it replaces may attach
        // it, and a record without attached keys drops those (FORMAT.md section 5.4).
        for text in texts[position] {
          added.append(CommitWrite(key: try entryKey(descriptor, text, objects[number].id, name), value: Data()))
        }
      }
    }
    if catalogChanged {
      added.append(CommitWrite(key: IndexStoreKeys.catalogKey(collection: name), value: try catalog.encoded()))
    }
  }

  /// Throws unless every value the objects get in a unique index is held by one object after
  /// the commit: the stored holders the commit does not change, plus the commit's own.
  private func checkUnique(
    _ descriptor: IndexDescriptor, position: Int, group: IndexedGroup, entries: IndexSource,
    _ collection: String
  ) throws {
    var holders: [ByteString: ByteString] = [:]
    for object in group.objects {
      // `nil` never collides, as NULL in SQL's unique indexes: many objects may lack a value.
      for text in object.texts?[position] ?? [] where !(descriptor.isOptional && text == "0") {
        let key = ByteString(text)
        if let holder = holders[key], holder != ByteString(object.id) {
          throw CollectionError.uniqueViolation(collection: collection, index: descriptor.name)
        }
        holders[key] = ByteString(object.id)
        try entries.ids(in: .equal(text)) { stored in
          // A stored holder that this commit changes counts with its new texts above.
          if !group.writes(id: stored) {
            throw CollectionError.uniqueViolation(collection: collection, index: descriptor.name)
          }
          return true
        }
      }
    }
  }

  /// The texts `id` has in an index before the commit: from the in-memory entries when they
  /// are built; else from its stored object (what the entries of an index kept by every write
  /// are), which spares the first save after open a build of every index. An object stored
  /// that does not decode has its texts taken from the entries, built for it.
  private func oldTexts(of id: String, in source: IndexSource, _ descriptor: IndexDescriptor, _ state: inout State)
    throws -> [String]
  {
    do {
      return try source.texts(of: id)
    } catch CollectionError.decoding {
      return try entries(descriptor.group, in: &state).texts(of: id)
    }
  }

  func entryKey(_ descriptor: IndexDescriptor, _ text: String, _ id: String, _ collection: String) throws -> String {
    try checkEntryLength(descriptor, text, id, collection)
    return IndexStoreKeys.entryKey(group: descriptor.group, text: text, id: id)
  }

  /// Throws `CollectionError.indexValueTooLong` unless the entry's key fits in a store key.
  func checkEntryLength(_ descriptor: IndexDescriptor, _ text: String, _ id: String, _ collection: String) throws {
    let length = descriptor.group.utf8.count + text.utf8.count + id.utf8.count + 2
    guard length <= CaskFormat.maximumKeyLength else {
      throw CollectionError.indexValueTooLong(collection: collection, index: descriptor.name)
    }
  }
}

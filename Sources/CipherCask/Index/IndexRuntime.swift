import Foundation

/// The secondary indexes of one store in this process: the declared definitions by
/// collection, the catalogues read so far, and the in-memory entries of every index used so
/// far. One per store (`CaskStore.extensions`), made when a collection with indexes is made.
///
/// Locking: `state` is taken by queries (never holding the writer), by the commit hook and the
/// change observer (both under the writer lock), and by builds (inside a transaction). Nothing
/// holding `state` takes the writer lock, so no two locks are ever taken in opposite orders.
final class IndexRuntime: Sendable {
  struct State: Sendable {
    var definitions: [ByteString: any IndexedDefinition] = [:]
    /// Catalogues as last read; dropped when a commit changes one (read again on next use).
    var catalogs: [ByteString: IndexCatalog] = [:]
    /// How many times a commit changed a catalogue: a read begun before a change is not used.
    var catalogGeneration: UInt64 = 0
    /// Catalogue reads begun at declaration, not yet used (IndexRuntime+CatalogRead.swift).
    var catalogReads: [ByteString: CatalogRead] = [:]
    /// Entries of each index group built so far. A box each, so that the change observer
    /// changes them through the reference it found (`recentGroups`) instead of through the
    /// dictionary (a lookup that hashes the group's name, byte by byte, for every key).
    var caches: [ByteString: EntriesBox] = [:] {
      // A box or its absence remembered is wrong once the table changes.
      didSet { recentGroups.removeAll() }
    }
    /// The groups the observer applied changes to since `caches` last changed, by their names'
    /// bytes, with their boxes (`nil`: not built, so nothing to apply).
    var recentGroups: [(group: [UInt8], box: EntriesBox?)] = []
    /// Collections whose undeclared catalogued indexes were marked stale in this process.
    var staleMarked: Set<ByteString> = []
    /// Index groups whose automatic build failed (a unique violation among the stored
    /// objects): queries scan instead of trying again; `buildIndexes` tries again.
    var failedBuilds: Set<ByteString> = []
    var closed = false
  }

  /// One index's entries in `State.caches`, with the sets of ids queries collected from them
  /// (`IDSet`). Unchecked: read and changed only under the runtime's `state` lock; readers
  /// outside it get a copy of `entries` (copy on write) and the `generation` it had.
  final class EntriesBox: @unchecked Sendable {
    private(set) var entries: IndexEntries
    /// Bumped by every change to `entries`, in the same lock section: a set collected from a
    /// copy of `entries` belongs to the generation the copy was taken at, and is served only
    /// to a query whose copy is of that generation.
    private(set) var generation: UInt64 = 0
    /// Sets of the ids of the entries in some bounds, all of `generation`, the most recently
    /// used last; emptied by every change.
    private var idSets: [(bounds: EntryBounds, set: IDSet)] = []

    /// The most sets kept, and the most ids in one kept: a page of a city by date collects
    /// the city's ids on every call, and paging through one city, or a few, asks for the same
    /// sets again. A set of 65,536 ids of 16 bytes is about 4 MB (slots of 16 bytes, half
    /// full, and the packed ids with their starts), so an index keeps at most about 16 MB,
    /// and that only while its sets are that large and no write has dropped them.
    static let maximumIDSets = 4
    static let maximumIDSetCount = 1 << 16

    init(_ entries: IndexEntries) { self.entries = entries }

    /// Inserts the entry given as its UTF-8 bytes (`IndexEntries.insert(entryBytes:)`).
    func insert(entryBytes entry: UnsafeRawBufferPointer) {
      if entries.insert(entryBytes: entry) { changed() }
    }

    /// Removes the entry given as its UTF-8 bytes (`IndexEntries.remove(entryBytes:)`).
    func remove(entryBytes entry: UnsafeRawBufferPointer) {
      if entries.remove(entryBytes: entry) { changed() }
    }

    private func changed() {
      generation &+= 1
      if !idSets.isEmpty { idSets.removeAll() }
    }

    /// The set of the ids of the entries in `bounds` kept for `generation`, if any.
    func idSet(in bounds: EntryBounds, at generation: UInt64) -> IDSet? {
      guard generation == self.generation, let found = idSets.lastIndex(where: { $0.bounds == bounds }) else {
        return nil
      }
      let kept = idSets.remove(at: found)
      idSets.append(kept)
      return kept.set
    }

    /// Keeps `set`, the ids of the entries in `bounds` at `generation`, unless the entries
    /// have changed since (it would be stale) or it is too large.
    func keep(_ set: IDSet, in bounds: EntryBounds, at generation: UInt64) {
      guard generation == self.generation, set.count <= Self.maximumIDSetCount else { return }
      idSets.removeAll { $0.bounds == bounds }
      if idSets.count >= Self.maximumIDSets { idSets.removeFirst() }
      idSets.append((bounds, set))
    }
  }

  private let storeBox: WeakStore
  let state = Locked(State())
  private let observation = Locked<CaskObservation?>(nil)

  private init(store: CaskStore) {
    storeBox = WeakStore(store)
  }

  /// The runtime of `store`, made (with its observer and commit hook) on first use.
  static func of(_ store: CaskStore) -> IndexRuntime {
    let runtime = store.extensions.slot("CipherCask.IndexRuntime") { IndexRuntime(store: store) }
    runtime.start(store)
    return runtime
  }

  private func start(_ store: CaskStore) {
    observation.withLock { observation in
      guard observation == nil else { return }
      // The observer first, then the hook: every commit the hook adds entries to is seen.
      // Before every other observer: a query's observe() re-runs on another thread when told
      // of a commit, and must find the commit's entries here.
      observation = store.observeChangesFirst { [weak self] changes in
        self?.apply(changes)
      } onClose: { [weak self] in
        self?.state.withLock { state in
          state = State()
          state.closed = true
        }
      }
      store.extensions.setCommitHook { [weak self] writes in
        try self?.commitWrites(for: writes) ?? CommitAdditions()
      }
      store.extensions.setKeeper { [weak self] group in
        self?.state.withLock { $0.declares(group) } ?? false
      }
      store.extensions.setStreamedCommitHook { [weak self] in
        self.flatMap(StreamedIndexHook.init(runtime:))
      }
    }
  }

  var store: CaskStore {
    get throws {
      guard let store = storeBox.value else { throw CaskError.closed }
      return store
    }
  }

  /// Declares `definition` for its collection (replacing an earlier declaration), and begins
  /// reading its catalogue in the background (`prefetchCatalog`).
  func register(_ definition: any IndexedDefinition) {
    state.withLock { state in
      let name = ByteString(definition.collection)
      state.definitions[name] = definition
      state.staleMarked.remove(name)
    }
    prefetchCatalog(of: definition.collection)
  }

  func definition(of collection: String) -> (any IndexedDefinition)? {
    state.withLock { $0.definitions[ByteString(collection)] }
  }

  // MARK: Keeping the entries current

  /// The change observer: applies each commit's index keys to the entries built so far, and
  /// forgets changed catalogues. Inserting what is there or removing what is not does nothing,
  /// so a commit that a build already read is applied harmlessly.
  private func apply(_ changes: [CaskChange]) {
    var touched = false
    for change in changes where change.key.utf8.first == IndexStoreKeys.reservedPrefix {
      touched = true
      break
    }
    guard touched else { return }
    state.withLock { state in
      // A commit's index keys come group by group: the group is found once per run of them,
      // not once per key. Each key is read as bytes. Prevents: a search for its U+0000
      // through the generic `String.UTF8View` and two substrings per key (a sixth of keeping
      // the entries of a save). `current`: the run's place in `recentGroups`, and whether it
      // is the catalogues' group.
      var current: (recent: Int, isCatalog: Bool)?
      for change in changes where change.key.utf8.first == IndexStoreKeys.reservedPrefix {
        withUTF8Bytes(change.key) { key in
          guard let (group, rest) = IndexStoreKeys.splitKey(bytes: key) else { return }
          let sameGroup =
            current.map { state.recentGroups[$0.recent].group.withUnsafeBytes { compareRaw($0, group) == 0 } } ?? false
          if !sameGroup {
            let isCatalog = withUTF8Bytes(IndexStoreKeys.catalogGroup) { compareRaw($0, group) == 0 }
            current = (state.recentGroup(group), isCatalog)
          }
          guard let run = current else { return }
          if run.isCatalog {
            state.catalogs[ByteString(String(decoding: rest, as: UTF8.self))] = nil
            state.catalogGeneration &+= 1
            return
          }
          // Entries not built are left alone: a build reads the store's keys.
          guard let box = state.recentGroups[run.recent].box else { return }
          if change.kind == .deleted {
            box.remove(entryBytes: rest)
          } else {
            box.insert(entryBytes: rest)
          }
        }
      }
    }
  }

  /// The entries of `group`, built from the store's keys if not yet in memory.
  func entries(_ group: String, in state: inout State) throws -> IndexEntries {
    let key = ByteString(group)
    if let box = state.caches[key] { return box.entries }
    guard !state.closed else { throw CaskError.closed }
    let entries = IndexEntries(keys: try store.packedKeys(inGroup: group), prefixLength: group.utf8.count + 1)
    state.caches[key] = EntriesBox(entries)
    return entries
  }

  /// The entries of index `position` of `definition` as a query reads them: in memory when
  /// they are built (kept current by every commit), else through the store's sorted view of
  /// the group when it has one (nothing built), else built now.
  func source(
    _ descriptor: IndexDescriptor, at position: Int, of definition: any IndexedDefinition, in state: inout State
  ) throws -> IndexSource {
    if let box = state.caches[ByteString(descriptor.group)] { return .memory(box.entries) }
    guard !state.closed else { throw CaskError.closed }
    guard let view = try store.sortedView(ofGroup: descriptor.group) else {
      return .memory(try entries(descriptor.group, in: &state))
    }
    let box = storeBox
    let collection = definition.collection
    return .view(
      IndexView(entries: view) { id in
        guard let store = box.value else { throw CaskError.closed }
        guard let data = try store.get(collection + "\u{0}" + id) else { return [] }
        return try definition.texts(from: data, id: id)[position]
      })
  }

  /// The catalogue of `collection`, read from the store if not yet in memory.
  func catalog(_ collection: String, in state: inout State) throws -> IndexCatalog {
    let key = ByteString(collection)
    if let catalog = state.catalogs[key] { return catalog }
    guard !state.closed else { throw CaskError.closed }
    let catalog = try prefetchedCatalog(of: collection, in: &state) ?? Self.readCatalog(of: collection, from: store)
    state.catalogs[key] = catalog
    return catalog
  }
}

extension IndexRuntime.State {
  /// Whether a collection named `group` is declared (the keeper's answer, on every commit
  /// into a store with indexes): the few declared names compared as bytes, a lookup beyond.
  /// Prevents: the group made into a `String` and hashed byte by byte for a table of one or
  /// two collections.
  func declares(_ group: Substring) -> Bool {
    guard definitions.count <= 8 else { return definitions[ByteString(group)] != nil }
    return withUTF8Bytes(group) { group in
      definitions.keys.contains { name in withUTF8Bytes(name.string) { compareRaw($0, group) == 0 } }
    }
  }

  /// The place in `recentGroups` of the group named by `group`'s bytes, with the box of its
  /// entries (`nil` when they are not built): found by comparing bytes, else looked up once and
  /// remembered. Valid until the next call. Prevents: every index key of every commit hashing
  /// its group's name for a lookup in `caches`.
  mutating func recentGroup(_ group: UnsafeRawBufferPointer) -> Int {
    for index in recentGroups.indices where recentGroups[index].group.count == group.count {
      if recentGroups[index].group.withUnsafeBytes({ compareRaw($0, group) == 0 }) { return index }
    }
    let box = caches[ByteString(String(decoding: group, as: UTF8.self))]
    // A bound, for a store whose commits touch ever new groups.
    if recentGroups.count >= 64 { recentGroups.removeAll() }
    recentGroups.append((Array(group), box))
    return recentGroups.count - 1
  }
}

/// A weak reference to a store, sendable.
final class WeakStore: Sendable {
  private let reference: Locked<Weak>
  private struct Weak: @unchecked Sendable { weak var store: CaskStore? }

  init(_ store: CaskStore) { reference = Locked(Weak(store: store)) }

  var value: CaskStore? { reference.withLock { $0.store } }
}

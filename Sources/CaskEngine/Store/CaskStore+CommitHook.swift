import Foundation

/// One write of a batch as a commit hook sees it: a put (with its value) or a delete.
package struct CommitWrite: Sendable {
  package var key: String
  /// The new value; `nil` for a delete.
  package var value: Data?

  package init(key: String, value: Data?) {
    self.key = key
    self.value = value
  }
}

/// One key a put's record attaches, given as its parts: the key is `group U+0000 text U+0000
/// id`, with the id of the key that owns the record.
package struct AttachedEntry: Sendable {
  package var group: String
  package var text: String

  package init(group: String, text: String) {
    self.group = group
    self.text = text
  }
}

/// What a commit hook adds to a batch: writes of its own, and for puts of the batch the keys
/// their records carry (Docs/FORMAT.md, "Version 5: attached keys").
package struct CommitAdditions: Sendable {
  package var writes: [CommitWrite]
  /// For a key the batch puts: the whole set of keys its record attaches, each `group U+0000
  /// text U+0000 id` with the key's id, here or in `entries` (the set is the two together).
  /// Keys the record it replaces attached and this set lacks are dropped with no record. In a
  /// store before version 5 the engine writes each key of the set the store lacks as a put of
  /// an empty value instead.
  package var attachments: [String: [String]]
  /// For keys the batch puts (`owner`): keys of their sets given as their groups and texts (an
  /// owner listed twice gets both lists). A list, not a dictionary. Prevents: a hook that has
  /// the parts (the typed collections' index entries) joining each key into a string that the
  /// engine splits again, and a dictionary made and hashed for the one object of a save.
  package var entries: [(owner: String, entries: [AttachedEntry])]

  package init(
    writes: [CommitWrite] = [], attachments: [String: [String]] = [:],
    entries: [(owner: String, entries: [AttachedEntry])] = []
  ) {
    self.writes = writes
    self.attachments = attachments
    self.entries = entries
  }
}

/// Lets a layer above the engine add writes to every commit, in the same atomic batch, and keep
/// per-store state that lives as long as the store (the typed collections' secondary indexes).
///
/// The hook runs under the writer lock, after the batch's own writes were checked and before
/// they are appended, so what it reads of the store is exactly the state the batch applies to,
/// and no other commit can come in between. A hook that throws fails the whole commit: nothing
/// is written.
package final class StoreExtensions: Sendable {
  package typealias Hook = @Sendable (_ writes: [CommitWrite]) throws -> CommitAdditions
  /// Held in a class: a closure kept directly in the generic `Locked` is reabstracted on every
  /// read and written back wrapped (its `withLock` passes the value `inout`), so each commit
  /// added a thunk and calls grew deeper without bound.
  private final class HookBox: Sendable {
    let hook: Hook
    init(_ hook: @escaping Hook) { self.hook = hook }
  }
  private let hook = Locked<HookBox?>(nil)
  package typealias StreamedHookMaker = @Sendable () -> (any StreamedCommitHook)?
  private final class StreamedHookBox: Sendable {
    let make: StreamedHookMaker
    init(_ make: @escaping StreamedHookMaker) { self.make = make }
  }
  private let streamedHook = Locked<StreamedHookBox?>(nil)
  private let slots = Locked<[String: any Sendable]>([:])
  package typealias Keeper = @Sendable (_ group: Substring) -> Bool
  private final class KeeperBox: Sendable {
    let keeps: Keeper
    init(_ keeps: @escaping Keeper) { self.keeps = keeps }
  }
  private let keeperBox = Locked<KeeperBox?>(nil)

  init() {}

  /// Installs the store's commit hook (one per store; a second call replaces the first).
  package func setCommitHook(_ newHook: Hook?) {
    let box = newHook.map(HookBox.init)
    hook.withLock { $0 = box }
  }

  var commitHook: Hook? { hook.withLock { $0 }?.hook }

  /// Installs what makes the hook of each streamed batch (one per store; a second call
  /// replaces the first). It does for a streamed batch what the commit hook does for a batch.
  package func setStreamedCommitHook(_ make: StreamedHookMaker?) {
    let box = make.map(StreamedHookBox.init)
    streamedHook.withLock { $0 = box }
  }

  /// Installs what says whether the commit hooks keep a group's derived data (its secondary
  /// indexes): a write to a kept group (`CaskFormat.keptGroupsCatalog`) is refused unless it
  /// answers yes for that group.
  package func setKeeper(_ keeps: Keeper?) {
    let box = keeps.map(KeeperBox.init)
    keeperBox.withLock { $0 = box }
  }

  /// What says whether the installed hooks keep a group's derived data, if one is installed.
  var keeper: Keeper? { keeperBox.withLock { $0 }?.keeps }

  /// A new hook for one streamed batch, if a maker is installed.
  func makeStreamedHook(in store: CaskStore) throws -> (any StreamedCommitHook)? {
    let layer = streamedHook.withLock { $0 }?.make()
    guard let marks = try changeTracker.streamedHook(in: store) else { return layer }
    return layer.map { ChainedStreamedHook($0, marks) } ?? marks
  }

  /// Adds change marks to the commits of tracked groups (ChangeTracker.swift).
  let changeTracker = ChangeTracker()

  /// The value kept under `name` for this store, made by `make` on first use.
  package func slot<Value: Sendable>(_ name: String, make: () -> Value) -> Value {
    slots.withLock { slots in
      if let value = slots[name] as? Value { return value }
      let value = make()
      slots[name] = value
      return value
    }
  }
}

extension CaskBatch {
  /// The batch's writes in order, as a commit hook sees them.
  var commitWrites: [CommitWrite] {
    operations.map { operation in
      switch operation {
      case .put(let key, let value): return CommitWrite(key: key, value: value)
      case .delete(let key): return CommitWrite(key: key, value: nil)
      }
    }
  }
}

extension CaskStore {
  /// Runs the commit hook, if one is installed, on `batch` and encrypts the writes it adds
  /// behind `prepared`. Called with the writer lock held.
  ///
  /// - Parameter attachments: attached keys the caller gives the batch's puts itself (a
  ///   rekeyed copy), merged with the hook's.
  func addHookWrites(
    for batch: CaskBatch, to prepared: inout [Prepared], attaching attachments: [String: [String]] = [:]
  ) throws {
    guard batch.count > 0 else { return }
    try refuseUnkeptWrites(batch.operations.lazy.map(\.key))
    let hook = extensions.commitHook
    let tracking = try extensions.changeTracker.mayMark(batch, in: self)
    // Prevents: every commit of a store without hooks or tracked groups paying for a copy of
    // its writes.
    guard hook != nil || tracking || !attachments.isEmpty else { return }
    let writes = batch.commitWrites
    var additions = try hook.map { hook in try userCode.running { try hook(writes) } } ?? CommitAdditions()
    additions.attachments.merge(attachments) { $0 + $1 }
    var extra = additions.writes
    if tracking { extra += try extensions.changeTracker.marks(for: writes, in: self) }
    var added = CaskBatch()
    try attach(additions.attachments, entries: additions.entries, to: &prepared, orPutInto: &added)
    for write in extra {
      if let value = write.value { try added.put(value, forKey: write.key) } else { try added.delete(write.key) }
    }
    guard added.count > 0 else { return }
    prepared += try prepare(added)
  }

  /// Gives each put of `prepared` named in `attachments` or `entries` its attached keys; before
  /// version 5, adds to `added` a put of an empty value for each of them the store lacks instead.
  ///
  /// - Throws: `CaskError.invalidKey` when a set names a key the batch does not put, or a key
  ///   that is not its group, a text and the owner's id.
  private func attach(
    _ attachments: [String: [String]], entries: [(owner: String, entries: [AttachedEntry])],
    to prepared: inout [Prepared], orPutInto added: inout CaskBatch
  ) throws {
    guard !attachments.isEmpty || !entries.isEmpty else { return }
    let cipher = self.cipher
    // The one object of a save handed over as it came. Prevents: a list of owners made (an
    // allocation, and every string of the entry retained and released) for a single save.
    if attachments.isEmpty, entries.count == 1 {
      let index = try putPosition(of: IndexKey(entries[0].owner), in: prepared, positions: nil)
      try attach([], entries[0].entries, owner: entries[0].owner, to: &prepared, at: index, cipher, &added)
      return
    }
    var merged = attachments.mapValues { (keys: $0, entries: [AttachedEntry]()) }
    for (owner, parts) in entries { merged[owner, default: (keys: [], entries: [])].entries += parts }
    let owners = merged.map { ($0.key, $0.value.keys, $0.value.entries) }
    // A commit of one or a few objects finds each owner's put by comparing keys. Prevents: a
    // dictionary of every write's position made (and each key hashed) for a single save.
    var positions: [IndexKey: Int]?
    if owners.count > 4 {
      var table: [IndexKey: Int] = [:]
      for (index, operation) in prepared.enumerated() where !operation.isDelete { table[operation.key] = index }
      positions = table
    }
    for (owner, keys, parts) in owners {
      let index = try putPosition(of: IndexKey(owner), in: prepared, positions: positions)
      try attach(keys, parts, owner: owner, to: &prepared, at: index, cipher, &added)
    }
  }

  /// The position in `prepared` of the last put of `key`, looked up in `positions` when given.
  ///
  /// - Throws: `CaskError.invalidKey` when the batch does not put it.
  private func putPosition(of key: IndexKey, in prepared: [Prepared], positions: [IndexKey: Int]?) throws -> Int {
    let position = positions.map { $0[key] } ?? prepared.lastIndex { !$0.isDelete && $0.key == key }
    guard let position else { throw CaskError.invalidKey(reason: "attached keys name a key the batch does not put") }
    return position
  }

  /// Gives the put at `index` of `prepared`, of `owner`, the section of `keys` and `parts`;
  /// before version 5, adds to `added` a put of an empty value for each of them the store lacks.
  private func attach(
    _ keys: [String], _ parts: [AttachedEntry], owner: String, to prepared: inout [Prepared], at index: Int,
    _ cipher: RecordCipher, _ added: inout CaskBatch
  ) throws {
    guard let section = try AttachedKeys.encode(keys, entries: parts, owner: owner) else { return }
    if cipher.attachesKeys {
      prepared[index] = try attaching(section, to: prepared[index], cipher: cipher)
      return
    }
    let separator = CaskFormat.keyGroupSeparatorText
    let spelled = parts.map { $0.group + separator + $0.text + separator + owner.idPart }
    for key in keys + spelled where try !contains(key) { try added.put(Data(), forKey: key) }
  }
}

extension String {
  /// The part after the first U+0000 (a collection's id in its key); empty without one.
  fileprivate var idPart: Substring {
    guard let separator = utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else { return "" }
    return self[index(after: separator)...]
  }
}

extension CaskStore {
  /// The keys of a group in no particular order: for a layer that sorts them its own way
  /// (`keys(inGroup:)` sorts them by comparing UTF-8 views, which costs more than the copy).
  ///
  /// - Complexity: O(m) for the m keys of the group.
  package func unsortedKeys(inGroup group: String) throws -> [String] {
    try state.withLock { state in
      try state.throwIfClosed()
      let keys = state.directory.keys(inGroup: group)
      try state.throwIfDamaged()
      return keys
    }
  }

  /// The keys of a group in no particular order, as UTF-8 bytes back to back: for a layer
  /// that builds its own structures from many keys (a `String` per key costs an allocation
  /// and a UTF-8 check each).
  ///
  /// - Complexity: O(m) for the m keys of the group, one copy of their bytes.
  package func packedKeys(inGroup group: String) throws -> PackedKeys {
    try state.withLock { state in
      try state.throwIfClosed()
      let keys = state.directory.packedKeys(inGroup: group)
      try state.throwIfDamaged()
      return keys
    }
  }
}

extension CaskStore {
  /// Throws `CaskError.writeRefused` when one of `keys` is in a kept group (one named in
  /// `CaskFormat.keptGroupsCatalog`) that no installed hook keeps. Called with the writer lock
  /// held, before anything of the commit is written.
  ///
  /// - Complexity: O(1) in a store without kept groups; otherwise one lookup per group the
  ///   hooks do not keep.
  func refuseUnkeptWrites<Keys: Sequence<String>>(_ keys: Keys) throws {
    guard state.withLock({ $0.directory.count(inGroup: CaskFormat.keptGroupsCatalog) > 0 }) else { return }
    let keeper = extensions.keeper
    // The groups the hooks do not keep, asked first: a write to a group they keep is never
    // refused, so its marker need not be looked up. Prevents: a save into an indexed
    // collection building the marker's key and probing the index for it on every commit.
    // Asked outside `state`: the hooks' own locks are taken before `state`, never inside it.
    // A key in the group of the key before it is skipped by comparing bytes, and the set is
    // made only when a second group comes. Prevents: every commit hashing its first key's
    // group as a `Substring` (Unicode-aware) for a set it never needs.
    var previous: Substring?
    var checked: Set<Substring> = []
    var unkept: [Substring] = []
    for key in keys {
      guard let separator = key.utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else { continue }
      let group = key[..<separator]
      guard group.utf8.first != CaskFormat.reservedGroupByte else { continue }
      if let previous {
        if previous.utf8.elementsEqual(group.utf8) { continue }
        if checked.isEmpty { checked.insert(previous) }
        guard checked.insert(group).inserted else { continue }
      }
      previous = group
      if keeper?(group) != true { unkept.append(group) }
    }
    guard !unkept.isEmpty else { return }
    // The writer lock is held, so the markers are those the check above saw.
    let kept = state.withLock { state -> [Substring] in
      unkept.filter { group in
        let marker = CaskFormat.keptGroupsCatalog + CaskFormat.keyGroupSeparatorText + group
        return IndexKey.withUTF8(of: marker) { state.directory.location(forBytes: $0) != nil }
      }
    }
    for group in kept {
      throw CaskError.writeRefused(
        group: String(group),
        reason: "its secondary indexes are recorded in the store, and only a collection declared with "
          + "them can keep them; write it through such a collection (store.collection(_:named:indexes:))")
    }
  }
}

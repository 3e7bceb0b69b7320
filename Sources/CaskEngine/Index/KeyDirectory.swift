import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The in-memory hash index: key -> location of its newest record, plus per-segment usage.
///
/// Keys that contain `CaskFormat.keyGroupSeparator` (U+0000) are *grouped* by the part before
/// it (the typed collections store `name + "\u{0}" + id`): each group has its own table, so
/// listing or counting one group costs O(size of the group), whatever else the store holds.
struct KeyDirectory: Sendable {
  /// What every table of this directory hashes its keys with (`KeyHashKey`).
  let hashKey: KeyHashKey
  private(set) var ungrouped: KeyTable
  private(set) var groups: GroupTables
  private(set) var usage: [UInt32: SegmentUsage] = [:]
  /// Number of live keys.
  private(set) var count = 0
  /// The records that carry attached keys (`KeyDirectory+Attachments.swift`), as
  /// `segment << 32 | offset`: an owner leaving one of them takes its attached keys along.
  var attachedOwners: Set<UInt64> = []
  /// Whether `attachedOwners` was built: not yet for tables a checkpoint held, whose
  /// attached keys (its slots of length 0) name them.
  var attachedOwnersKnown = true
  /// The checkpoint whose pages the tables load when first touched, if the directory was
  /// loaded from one.
  private(set) var pages: CheckpointPages?
  /// The sorted groups' keys as the checkpoint held them and what changed since
  /// (`KeyDirectory+Sorted.swift`); `nil` unless the directory was loaded from a checkpoint
  /// with sorted pages.
  var sorted: SortedGroups?

  init(hashKey: KeyHashKey = .random()) {
    self.hashKey = hashKey
    ungrouped = KeyTable(hashKey: hashKey)
    groups = GroupTables(hashKey: hashKey)
  }

  /// A directory made of tables a checkpoint held (`Checkpoint+Loading.swift`), all
  /// under `hashKey`, loading their pages from `pages`.
  init(
    hashKey: KeyHashKey, ungrouped: KeyTable, groups: [(name: IndexKey, table: KeyTable)], pages: CheckpointPages?
  ) {
    self.hashKey = hashKey
    self.pages = pages
    self.ungrouped = ungrouped
    self.groups = GroupTables(hashKey: hashKey, tables: groups)
    count = ungrouped.count + groups.reduce(0) { $0 + $1.table.count }
    attachedOwnersKnown = false
  }

  /// Why the directory can no longer be trusted: a page of the checkpoint it loads from failed
  /// its checks when first touched, so a lookup may have missed a key and a change may not
  /// have been made. Every operation of the store that reads the index throws it from then
  /// on (`CaskStore.checkIndex`). `nil` while every page touched checked out.
  var damage: CaskError? { pages?.damage }

  /// Loads every page not yet loaded from the checkpoint, slots and chunks of long keys, and
  /// checks every long key once (`KeyTable.loadEverything`; nothing for a directory built
  /// from hints).
  ///
  /// - Returns: `false` when a page failed (`damage` says which).
  /// - Complexity: O(pages not yet loaded): one read and decryption of each.
  func loadAllPages() -> Bool {
    guard pages != nil else { return true }
    guard ungrouped.loadEverything() else { return false }
    for table in groups.tables where !table.loadEverything() { return false }
    return true
  }

  /// The group of a key: the part before its first U+0000, or `nil`.
  static func group(of key: IndexKey) -> IndexKey? {
    let utf8 = key.string.utf8
    guard let separator = utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else { return nil }
    return IndexKey(String(key.string[..<separator]))
  }

  /// The group of a key given as bytes: the part before its first 0 byte, or `nil`.
  private static func group(ofBytes key: UnsafeRawBufferPointer) -> IndexKey? {
    groupBytes(of: key).map { IndexKey(String(decoding: $0, as: UTF8.self)) }
  }

  /// The bytes before a key's first 0 byte, or `nil` when it has none.
  static func groupBytes(of key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
    guard let base = key.baseAddress, let zero = memchr(base, Int32(CaskFormat.keyGroupSeparator), key.count) else {
      return nil
    }
    return UnsafeRawBufferPointer(start: base, count: base.distance(to: UnsafeRawPointer(zero)))
  }

  /// Applies a batch of a hint's entries, all of segment `segment`, in order: as
  /// `applyPut(keyBytes:at:)` and `applyDelete(keyBytes:at:)` one by one would, with
  /// `onDelete` called for each tombstone. Each key is hashed once, and its table found once
  /// (its group's among the few used lately), in a first pass that also reads every key's
  /// first slot, so that the cache misses of the whole batch overlap (open spent most of its
  /// time in them, one at a time).
  mutating func apply(
    hintBatch batch: UnsafeBufferPointer<HintPayload.EntryView>, segment: UInt32,
    onDelete: (HintPayload.EntryView) -> Void
  ) {
    let outside = -1
    let noGroup = -2
    withUnsafeTemporaryAllocation(of: (table: Int, meta: UInt32).self, capacity: batch.count) { plans in
      var combined: UInt32 = 0
      for index in 0..<batch.count {
        let entry = batch[index]
        let meta = KeyTable.meta(entry.key, hashKey: hashKey)
        var table = outside
        if let group = Self.groupBytes(of: entry.key) {
          table = entry.isDelete ? (groups.position(ofBytes: group) ?? noGroup) : groups.position(creatingGroup: group)
        }
        plans[index] = (table, meta)
        let home =
          table == outside
          ? ungrouped.homeSlot(meta: meta) : table >= 0 ? groups.tables[table].homeSlot(meta: meta) : nil
        // Independent loads: the processor has the batch's misses in flight together.
        if let home { combined ^= home.load(fromByteOffset: CaskFormat.slotMetaOffset, as: UInt32.self) }
      }
      Self.warmSink.store(combined, ordering: .relaxed)
      var listed: UInt64 = 0
      var tombstones: UInt64 = 0
      let tables = groups.tables.count
      // A delete that empties a group removes its table and moves another: the positions found
      // above are then stale, and the rest of the batch finds its tables again.
      var positionsHold = true
      for index in 0..<batch.count {
        let entry = batch[index]
        let location = RecordLocation(segment: segment, offset: entry.offset, length: entry.length)
        listed += UInt64(entry.length)
        let old: RecordLocation?
        if entry.isDelete {
          tombstones += UInt64(entry.length)
          onDelete(entry)
          old = setLocation(nil, forBytes: entry.key)
          if groups.tables.count != tables { positionsHold = false }
        } else if !positionsHold {
          old = setLocation(location, forBytes: entry.key)
        } else {
          let (table, meta) = plans[index]
          old =
            table == outside
            ? ungrouped.updateValue(location, forKey: entry.key, meta: meta)
            : groups.updateValue(location, forKey: entry.key, meta: meta, at: table)
          if old == nil {
            count += 1
            if sorted != nil { noteSortedChange(entry.key, present: true) }
          }
        }
        if let old { usage[old.segment, default: SegmentUsage()].deadBytes += UInt64(old.length) }
      }
      var segmentUsage = usage[segment, default: SegmentUsage()]
      segmentUsage.totalBytes += listed
      segmentUsage.deadBytes += tombstones
      usage[segment] = segmentUsage
    }
  }

  /// Slots allocated in the table of keys outside any group (each 32 bytes).
  var ungroupedCapacity: Int { ungrouped.capacity }

  /// Slots allocated in the table of one group (0 when it has none).
  func capacity(inGroup group: String) -> Int {
    groups[IndexKey(group)]?.capacity ?? 0
  }

  /// The most hint entries `apply(hintBatch:)` reads ahead of in one call.
  static let hintBatch = 32
  /// Where `apply(hintBatch:)` puts what it read ahead, so that the compiler keeps the reads.
  private static let warmSink = Atomic<UInt32>(0)

  /// The location of a key's newest record.
  ///
  /// - Complexity: O(1) on average (plus O(key length) to find its group).
  subscript(key: IndexKey) -> RecordLocation? {
    IndexKey.withUTF8(of: key.string) { bytes in location(forBytes: bytes) }
  }

  /// The location of the newest record of the key with UTF-8 `bytes`. Reads the tables in
  /// place. Prevents: a copy of the directory (a retain and a release of each of its tables)
  /// and a `String` for the key's group on every get.
  ///
  /// - Complexity: O(1) on average (plus O(key length) to find its group).
  func location(forBytes bytes: UnsafeRawBufferPointer) -> RecordLocation? {
    guard let group = Self.groupBytes(of: bytes) else { return ungrouped[bytes] }
    guard let position = groups.existingPosition(ofBytes: group) else { return nil }
    return groups.tables[position][bytes]
  }

  /// Makes room for the keys that hints are about to add, table by table: open calls it once
  /// with the sizes all hints claim, so that no table grows while it indexes them, and
  /// `growing` for one hint at a time (tables that must grow then at least double). A group
  /// without a table gets one, sized so, only when its first key comes.
  mutating func plan(_ sizes: HintSizes, growing: Bool) {
    if sizes.ungrouped > 0 {
      if growing {
        ungrouped.reserveCapacity(growingTo: ungrouped.count + sizes.ungrouped)
      } else {
        ungrouped.reserveCapacity(ungrouped.count + sizes.ungrouped)
      }
    }
    for group in sizes.groups {
      group.name.withUnsafeBytes { groups.plan(additional: group.puts, inGroup: $0, growing: growing) }
    }
  }

  /// Forgets what `plan` expected of groups that got no key.
  mutating func forgetPlans() {
    groups.forgetPlans()
  }

  /// Makes room in each table for the keys of `table` that go into it, before they are
  /// applied in `table`'s slot order. Prevents: keys arriving in hash order into a table sized
  /// for fewer crowding its first slots into one probe run that every later insert walks
  /// (quadratic; the publish of a 60,000-key streamed batch spent 1 s in it).
  ///
  /// - Complexity: O(capacity of `table`).
  mutating func reserveCapacity(forKeysOf table: KeyTable) {
    var perGroup: [IndexKey: Int] = [:]
    var plain = 0
    // Puts only: a delete adds no key, and a group of deletes alone must not leave an empty
    // table behind.
    table.forEachEntryBytes { key, location in
      guard location.segment != 0 else { return }
      if let group = Self.group(ofBytes: key) { perGroup[group, default: 0] += 1 } else { plain += 1 }
    }
    if plain > 0 { ungrouped.reserveCapacity(ungrouped.count + plain) }
    for (group, added) in perGroup { groups.reserveCapacity(additional: added, inGroup: group) }
  }

  /// Sets or removes a key's location, keeping `count` right. Returns the previous location.
  @discardableResult
  private mutating func setLocation(_ location: RecordLocation?, for key: IndexKey) -> RecordLocation? {
    IndexKey.withUTF8(of: key.string) { bytes in setLocation(location, forBytes: bytes) }
  }

  /// Sets or removes the location of the key with UTF-8 `bytes`.
  @discardableResult
  mutating func setLocation(_ location: RecordLocation?, forBytes bytes: UnsafeRawBufferPointer)
    -> RecordLocation?
  {
    let previous: RecordLocation?
    if let group = Self.groupBytes(of: bytes) {
      if let location {
        let position = groups.position(creatingGroup: group)
        previous = groups.updateValue(location, forKey: bytes, at: position)
      } else if let position = groups.position(ofBytes: group) {
        previous = groups.removeValue(forKey: bytes, at: position)
      } else {
        previous = nil
      }
    } else if let location {
      previous = ungrouped.updateValue(location, forKey: bytes)
    } else {
      previous = ungrouped.removeValue(forKey: bytes)
    }
    if previous == nil && location != nil { count += 1 }
    if previous != nil && location == nil { count -= 1 }
    if sorted != nil, (previous == nil) != (location == nil) { noteSortedChange(bytes, present: location != nil) }
    return previous
  }
  /// Records a put at `location`; the record it replaces, if any, becomes dead.
  ///
  /// - Returns: whether the key existed before.
  /// - Complexity: O(1) on average.
  @discardableResult
  mutating func applyPut(_ key: IndexKey, at location: RecordLocation) -> Bool {
    usage[location.segment, default: SegmentUsage()].totalBytes += UInt64(location.length)
    guard let old = setLocation(location, for: key) else { return false }
    usage[old.segment, default: SegmentUsage()].deadBytes += UInt64(old.length)
    return true
  }

  /// `applyPut` for a key given as valid UTF-8 bytes (open indexes hints this way, making no
  /// `String`).
  @discardableResult
  mutating func applyPut(keyBytes: UnsafeRawBufferPointer, at location: RecordLocation) -> Bool {
    usage[location.segment, default: SegmentUsage()].totalBytes += UInt64(location.length)
    let old = setLocation(location, forBytes: keyBytes)
    guard let old else { return false }
    usage[old.segment, default: SegmentUsage()].deadBytes += UInt64(old.length)
    return true
  }

  /// `applyPut` of an attached key (`location` of length 0, no bytes of its own in the usage
  /// figures) given as valid UTF-8 bytes.
  ///
  /// - Returns: the key's location before, if it had one.
  mutating func applyAttachedPut(keyBytes: UnsafeRawBufferPointer, at location: RecordLocation) -> RecordLocation? {
    let old = setLocation(location, forBytes: keyBytes)
    if let old, old.length > 0 { usage[old.segment, default: SegmentUsage()].deadBytes += UInt64(old.length) }
    return old
  }

  /// `applyDelete` for a key given as valid UTF-8 bytes.
  @discardableResult
  mutating func applyDelete(keyBytes: UnsafeRawBufferPointer, at location: RecordLocation) -> Bool {
    var segmentUsage = usage[location.segment, default: SegmentUsage()]
    segmentUsage.totalBytes += UInt64(location.length)
    segmentUsage.deadBytes += UInt64(location.length)
    usage[location.segment] = segmentUsage
    guard let old = setLocation(nil, forBytes: keyBytes) else { return false }
    usage[old.segment, default: SegmentUsage()].deadBytes += UInt64(old.length)
    return true
  }

  /// Records a tombstone at `location` (dead from the start); the key's record becomes dead.
  ///
  /// - Returns: whether the key was present.
  @discardableResult
  mutating func applyDelete(_ key: IndexKey, at location: RecordLocation) -> Bool {
    var segmentUsage = usage[location.segment, default: SegmentUsage()]
    segmentUsage.totalBytes += UInt64(location.length)
    segmentUsage.deadBytes += UInt64(location.length)
    usage[location.segment] = segmentUsage
    guard let old = setLocation(nil, for: key) else { return false }
    usage[old.segment, default: SegmentUsage()].deadBytes += UInt64(old.length)
    return true
  }

  /// Points `key` at a copy of its record made by compaction, if it still points at `old`.
  /// Otherwise the copy is dead from the start.
  ///
  /// - Returns: whether the key was moved.
  @discardableResult
  mutating func relocate(_ key: IndexKey, from old: RecordLocation, to new: RecordLocation) -> Bool {
    var segmentUsage = usage[new.segment, default: SegmentUsage()]
    segmentUsage.totalBytes += UInt64(new.length)
    let moved = self[key] == old
    if moved { setLocation(new, for: key) } else { segmentUsage.deadBytes += UInt64(new.length) }
    usage[new.segment] = segmentUsage
    return moved
  }

  /// Removes `key` if it still points at `location` (a damaged record compaction could not
  /// copy). No tombstone is involved: the record goes with its segment.
  mutating func drop(_ key: IndexKey, ifAt location: RecordLocation) {
    if self[key] == location { setLocation(nil, for: key) }
  }

  /// Counts `bytes` of a segment that no entry describes (records a hint left out) as dead.
  mutating func addDeadBytes(_ bytes: UInt64, in id: UInt32) {
    usage[id, default: SegmentUsage()].totalBytes += bytes
    usage[id, default: SegmentUsage()].deadBytes += bytes
  }

  /// Counts every byte of a segment as dead (compaction copied its live records but could
  /// not remove the file).
  mutating func markDead(_ id: UInt32) {
    if var segmentUsage = usage[id] {
      segmentUsage.deadBytes = segmentUsage.totalBytes
      usage[id] = segmentUsage
    }
  }

  /// Sets the usage figures of the segments a checkpoint describes, which it counted over the
  /// records before it, replacing what loading its entries added. Taken from the root's list
  /// as it is: a dictionary built for it at open was a generic type of its own, whose metadata
  /// a process makes at its first use.
  mutating func restoreUsage(_ segments: [Checkpoint.SegmentEntry]) {
    for segment in segments {
      usage[segment.id] = SegmentUsage(totalBytes: segment.totalBytes, deadBytes: segment.deadBytes)
    }
  }

  /// Forgets a segment's usage once compaction has removed it.
  mutating func forgetSegment(_ id: UInt32) {
    usage[id] = nil
  }

  var liveBytes: UInt64 { usage.values.reduce(0) { $0 + $1.totalBytes - min($1.totalBytes, $1.deadBytes) } }
  var deadBytes: UInt64 { usage.values.reduce(0) { $0 + min($1.totalBytes, $1.deadBytes) } }

  /// Live and dead bytes of the segments `include` accepts.
  func usage(of include: (UInt32) -> Bool) -> (live: UInt64, dead: UInt64) {
    usage.reduce(into: (live: UInt64(0), dead: UInt64(0))) { sum, entry in
      guard include(entry.key) else { return }
      let dead = min(entry.value.totalBytes, entry.value.deadBytes)
      sum.live += entry.value.totalBytes - dead
      sum.dead += dead
    }
  }
}

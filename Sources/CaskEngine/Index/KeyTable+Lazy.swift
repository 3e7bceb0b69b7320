import Foundation
import Synchronization

/// A table loaded from a checkpoint page by page (Docs/FORMAT.md, section 18): its slots are
/// reserved whole at open (memory that is never touched costs nothing), and each page of
/// `CaskFormat.checkpointSlotsPerPage` slots is read, checked and decrypted the first time a lookup, an insert, a removal or a
/// walk over the table touches it. No slot of a page is read before its page is loaded.
extension KeyTable {
  /// Where a table's slot pages are in a checkpoint, and what its root says of the table.
  struct PageSource: Sendable {
    let pages: CheckpointPages
    /// The table's number in the root (the pages name it).
    let table: Int
    /// The number of the table's first slot page among the file's pages.
    let firstPage: Int
    /// Used slots the root gives the table: what its pages must hold, all together.
    let expectedCount: Int
    /// The lengths of the table's chunks of long keys, as the root lists them.
    let chunkLengths: [Int]
    /// The group's name for a group's table, `nil` for the table of keys outside groups.
    let group: [UInt8]?
    let hashKey: KeyHashKey
  }

  /// Which pages of one `Storage` are loaded. Shared by nothing: a copy of the storage gets a
  /// copy of this (`Storage.copy`), and the two load their missing pages on their own.
  ///
  /// Concurrency: the store loads pages under its `state` lock, and the checkpoint writer
  /// loads pages of the same storage (shared copy-on-write with its snapshot) on the hint
  /// queue, with no store lock held. `lock` (a pthread mutex, which ThreadSanitizer sees)
  /// serialises the loads and the copy; a slot is read only after its page's load returned,
  /// which happened under `lock`, so the bytes a reader sees are the loaded ones. `complete`
  /// lets a fully loaded table skip the lock. A leaf: nothing is taken inside it but the
  /// pages' own failure record.
  final class LazyPages: @unchecked Sendable {
    let source: PageSource
    let pageCount: Int
    private let lock = NSLock()
    // Guarded by `lock`: 0 not loaded, 1 loaded, 2 failed (and never read again).
    private var states: [UInt8]
    private var missing: Int
    /// Used slots found in the pages when they were loaded: at most the root's count, and
    /// exactly it once every page is loaded.
    private var usedAtLoad = 0
    /// Whether every page is loaded: the fast path of `ensureLoaded`.
    let complete = Atomic<Bool>(false)

    init(source: PageSource, capacity: Int) {
      self.source = source
      pageCount = (capacity + CaskFormat.checkpointSlotsPerPage - 1) / CaskFormat.checkpointSlotsPerPage
      states = [UInt8](repeating: 0, count: pageCount)
      missing = pageCount
      if pageCount == 0 { complete.store(true, ordering: .releasing) }
    }

    private init(copying other: LazyPages) {
      source = other.source
      pageCount = other.pageCount
      states = other.states
      missing = other.missing
      usedAtLoad = other.usedAtLoad
      complete.store(other.complete.load(ordering: .acquiring), ordering: .releasing)
    }

    /// The number of pages loaded so far.
    var loadedPageCount: Int {
      lock.lock()
      defer { lock.unlock() }
      return pageCount - missing
    }

    /// Loads page `page` of `storage` unless it is loaded; `arena` holds the table's long keys.
    ///
    /// - Returns: whether the page is loaded and checked; `false` when it failed (now or
    ///   before), which the pages' `damage` reports.
    func load(_ page: Int, into storage: Storage, arena: KeyArena.Storage) -> Bool {
      lock.lock()
      defer { lock.unlock() }
      return loadLocked(page, into: storage, arena: arena)
    }

    /// Loads every page not yet loaded.
    func loadAll(into storage: Storage, arena: KeyArena.Storage) -> Bool {
      lock.lock()
      defer { lock.unlock() }
      for page in 0..<pageCount where !loadLocked(page, into: storage, arena: arena) { return false }
      return true
    }

    /// A storage of the same slots, holding the loaded pages' bytes, the rest to be loaded
    /// from the same file. Under `lock`, so that no page is half loaded while it is copied.
    func copy(of storage: Storage) -> Storage {
      lock.lock()
      defer { lock.unlock() }
      let copy = Storage(capacity: storage.capacity, lazy: LazyPages(copying: self))
      guard let from = storage.slots, let to = copy.slots else { return copy }
      for page in 0..<pageCount where states[page] == 1 {
        let (first, count) = slots(of: page, capacity: storage.capacity)
        (to + first * KeyTable.slotLength).copyMemory(
          from: from + first * KeyTable.slotLength, byteCount: count * KeyTable.slotLength)
      }
      return copy
    }

    private func slots(of page: Int, capacity: Int) -> (first: Int, count: Int) {
      let first = page * CaskFormat.checkpointSlotsPerPage
      return (first, min(capacity - first, CaskFormat.checkpointSlotsPerPage))
    }

    private func loadLocked(_ page: Int, into storage: Storage, arena: KeyArena.Storage) -> Bool {
      switch states[page] {
      case 1: return true
      case 2: return false
      default: break
      }
      let number = source.firstPage + page
      let (first, count) = slots(of: page, capacity: storage.capacity)
      do throws(Checkpoint.Rejection) {
        let contents = try source.pages.contents(
          of: number, kind: CaskFormat.checkpointPageSlots, table: source.table, count: count)
        var dense = [UInt8](repeating: 0, count: count * KeyTable.slotLength)
        let expanded = contents.withUnsafeBytes { contents in
          dense.withUnsafeMutableBytes { CheckpointTableImage.expandSlots(contents, count: count, into: $0) }
        }
        guard expanded else { throw Checkpoint.Rejection(reason: "page \(number) is malformed") }
        let checked = dense.withUnsafeBytes { bytes -> Result<Int, Checkpoint.Rejection> in
          let used = Result { () throws(Checkpoint.Rejection) in
            try KeyTable.checkSlots(bytes, source: source, arena: arena, first: first, capacity: storage.capacity)
          }
          if case .success = used, let base = bytes.baseAddress, let slots = storage.slots {
            (slots + first * KeyTable.slotLength).copyMemory(from: base, byteCount: bytes.count)
          }
          return used
        }
        usedAtLoad += try checked.get()
        missing -= 1
        guard usedAtLoad <= source.expectedCount, missing > 0 || usedAtLoad == source.expectedCount else {
          throw Checkpoint.Rejection(reason: "table \(source.table) does not hold the keys the root counts")
        }
      } catch {
        states[page] = 2
        source.pages.fail(page: number, error)
        return false
      }
      states[page] = 1
      if missing == 0 {
        storage.adviseHugePages()
        complete.store(true, ordering: .releasing)
      }
      return true
    }
  }

  /// Checks one page of slots as the table could have written it: known tags, each long key
  /// inside a chunk the root lists and 17 to 65,535 bytes long, each location at or after a
  /// segment's header and inside its listed length; each key held in a slot of the table's
  /// group (in a group's table the bytes before its first U+0000 are the group's name, in the
  /// table of keys outside groups it has no U+0000), each hashed again to its stored meta word
  /// (a wrong hash key would make every key unfindable, a wrong meta word one); and each slot
  /// where a probe for its meta word reaches it: no empty slot, and no slot of the same key,
  /// between its home and it, as far as that path lies in this page. A long key's own bytes
  /// are in a chunk loaded later: its group and hash are checked when a walk hands it out or
  /// every key is checked (`handedOutLongKey`, `loadEverything`), its place here by its meta
  /// word, and a second slot of it by the same place in the same chunk. Prevents: a key
  /// loaded into another group's table, which the counts then miscounted and lookups never
  /// found; a key a lookup cannot find, which the next put of it would then add a second time.
  ///
  /// - Returns: the used slots.
  /// - Complexity: O(slots + the distances of their keys from their homes inside the page),
  ///   plus one hash per key held in a slot.
  static func checkSlots(
    _ slots: UnsafeRawBufferPointer, source: PageSource, arena: KeyArena.Storage, first: Int, capacity: Int
  ) throws(Checkpoint.Rejection) -> Int {
    let rejection = Checkpoint.Rejection(reason: "a page of table \(source.table) is not coherent")
    let lengths = source.pages.segmentLengths
    var used = 0
    // The segment of the slot before, and its length: most neighbours share a segment.
    var lastSegment: UInt32?
    var lastLength: UInt64 = 0
    for offset in stride(from: 0, to: slots.count, by: slotLength) {
      let meta = slots.load(fromByteOffset: offset + 28, as: UInt32.self)
      let tag = meta & tagMask
      if tag == 0 { continue }
      used += 1
      if tag == longTag {
        let position = slots.load(fromByteOffset: offset, as: UInt64.self)
        let length = Int(slots.load(fromByteOffset: offset + 8, as: UInt32.self))
        let chunk = Int(position >> 32)
        let start = Int(position & 0xFFFF_FFFF)
        guard length > inlineLimit, length <= CaskFormat.maximumKeyLength, chunk < source.chunkLengths.count,
          start + length <= source.chunkLengths[chunk]
        else { throw rejection }
        // The chunks a checkpoint held keep their place in the arena until every page is
        // loaded (packing loads them all first).
        guard chunk < arena.chunks.count, start + length <= arena.lengths[chunk] else { throw rejection }
      } else if tag <= UInt32(inlineLimit) {
        let key = UnsafeRawBufferPointer(rebasing: slots[offset..<offset + Int(tag)])
        guard Self.key(key, belongsTo: source.group), Self.meta(key, hashKey: source.hashKey) == meta
        else { throw rejection }
      } else {
        throw rejection
      }
      guard Self.reachable(slot: offset / slotLength, in: slots, first: first, capacity: capacity) else {
        throw rejection
      }
      let segment = slots.load(fromByteOffset: offset + 16, as: UInt32.self)
      let recordOffset = UInt64(slots.load(fromByteOffset: offset + 20, as: UInt32.self))
      let recordLength = UInt64(slots.load(fromByteOffset: offset + 24, as: UInt32.self))
      if segment != lastSegment {
        guard let length = lengths[segment] else { throw rejection }
        lastSegment = segment
        lastLength = length
      }
      guard recordOffset >= UInt64(CaskFormat.segmentHeaderLength), recordOffset + recordLength <= lastLength else {
        throw rejection
      }
    }
    return used
  }

  /// Whether a probe for the meta word of the page's slot `slot` (used) reaches it: every
  /// slot between the meta word's home and it that lies in this page (whose first slot is
  /// the table's `first`) is used, and none holds the same key (for a long key: the same
  /// place in the same chunk).
  private static func reachable(slot: Int, in slots: UnsafeRawBufferPointer, first: Int, capacity: Int) -> Bool {
    let offset = slot * slotLength
    let meta = slots.load(fromByteOffset: offset + CaskFormat.slotMetaOffset, as: UInt32.self)
    let distance = (first + slot - home(meta, capacity: capacity) + capacity) % capacity
    let compared = meta & tagMask == longTag ? 12 : Int(meta & tagMask)
    for before in stride(from: slot - 1, through: max(slot - distance, 0), by: -1) {
      let other = before * slotLength
      let otherMeta = slots.load(fromByteOffset: other + CaskFormat.slotMetaOffset, as: UInt32.self)
      if otherMeta & tagMask == 0 { return false }
      if otherMeta == meta
        && slots[other..<other + compared].elementsEqual(slots[offset..<offset + compared])
      {
        return false
      }
    }
    return true
  }

  /// Whether `key` is of `group` (`nil`: of no group).
  private static func key(_ key: UnsafeRawBufferPointer, belongsTo group: [UInt8]?) -> Bool {
    let separator = key.firstIndex(of: CaskFormat.keyGroupSeparator)
    guard let group else { return separator == nil }
    return separator == group.count && key.prefix(group.count).elementsEqual(group)
  }

  /// A table of `capacity` slots whose pages load from `source` when first touched, holding
  /// `count` keys and the long keys of `arena` (whose chunks load when first needed).
  init(capacity: Int, count: Int, arena: KeyArena, source: PageSource) {
    self.init(hashKey: source.hashKey)
    storage = Storage(capacity: capacity, lazy: LazyPages(source: source, capacity: capacity))
    self.arena = arena
    self.count = count
  }

  /// The long key in the occupied `slot` (slot `index`) for a walk that hands it out: its
  /// chunk loaded and, until every long key of the table was checked (`loadEverything`), the
  /// key checked as a slot page checks a key it holds: of the table's group, and (slot
  /// numbers divisible by 16) hashing to its meta word. `nil` when the chunk failed to load or
  /// the key is not so, which is reported as a failure of the chunk's page.
  func handedOutLongKey(_ slot: UnsafeMutableRawPointer, at index: Int) -> UnsafeRawBufferPointer? {
    guard let key = longKey(slot) else { return nil }
    guard let lazy = arena.storage.lazy, !lazy.keysChecked.load(ordering: .acquiring) else { return key }
    return checkLongKey(key, in: slot, sampled: index % Checkpoint.hashCheckInterval == 0, chunks: lazy) ? key : nil
  }

  /// Whether the long `key` of `slot` is of its table's group and, when `sampled`, hashes to
  /// the slot's meta word; if not, fails the page of its chunk.
  private func checkLongKey(
    _ key: UnsafeRawBufferPointer, in slot: UnsafeMutableRawPointer, sampled: Bool, chunks: KeyArena.LazyChunks
  ) -> Bool {
    let source = chunks.source
    if Self.key(key, belongsTo: source.group),
      !sampled || Self.meta(key, hashKey: source.hashKey) == Self.storedMeta(slot)
    {
      return true
    }
    let chunk = Int(slot.load(fromByteOffset: CaskFormat.slotLongKeyPositionOffset, as: UInt64.self) >> 32)
    source.pages.fail(
      page: chunks.page(of: chunk),
      Checkpoint.Rejection(reason: "a long key of table \(source.table) is not coherent"))
    return false
  }

  /// Loads every page of slots and every chunk of long keys not yet loaded, and checks every
  /// long key once (as `handedOutLongKey` checks one, every 16th hashed again): before a walk
  /// that hands out every key, packing, or the next checkpoint (which writes the chunks whole).
  ///
  /// - Returns: `false` when a page or a chunk failed, or a key did not check out.
  /// - Complexity: O(capacity + bytes of the chunks) the first time; O(1) after.
  func loadEverything() -> Bool {
    guard loadAllPages() else { return false }
    guard let lazy = arena.storage.lazy, !lazy.keysChecked.load(ordering: .acquiring) else { return true }
    guard arena.loadAllChunks() else { return false }
    for index in 0..<storage.capacity {
      let slot = slot(index)
      guard Self.tag(slot) == Self.longTag else { continue }
      guard let key = longKey(slot),
        checkLongKey(key, in: slot, sampled: index % Checkpoint.hashCheckInterval == 0, chunks: lazy)
      else { return false }
    }
    lazy.keysChecked.store(true, ordering: .releasing)
    return true
  }

  /// Loads the page of slot `index` unless it is loaded (or the table is not lazy).
  ///
  /// - Returns: `false` when the page failed: nothing of it may be read or written.
  @inline(__always)
  func ensureLoaded(_ index: Int) -> Bool {
    guard let lazy = storage.lazy, !lazy.complete.load(ordering: .acquiring) else { return true }
    return lazy.load(index / CaskFormat.checkpointSlotsPerPage, into: storage, arena: arena.storage)
  }

  /// Loads every page not yet loaded: before a walk over all slots, a resize or packing.
  ///
  /// - Returns: `false` when a page failed.
  /// - Complexity: O(capacity) when pages are missing: one read and decryption of each.
  func loadAllPages() -> Bool {
    guard let lazy = storage.lazy, !lazy.complete.load(ordering: .acquiring) else { return true }
    return lazy.loadAll(into: storage, arena: arena.storage)
  }

  /// Whether every page is loaded (a table not loaded from a checkpoint always is).
  var isFullyLoaded: Bool {
    storage.lazy?.complete.load(ordering: .acquiring) ?? true
  }
}

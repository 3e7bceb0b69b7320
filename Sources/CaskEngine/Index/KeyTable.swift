#if canImport(Glibc)
  import Glibc
#endif

/// An open-addressing hash table from a key's UTF-8 bytes to the location of its record: the
/// storage behind `KeyDirectory`.
///
/// Every slot is 32 bytes in one flat buffer:
///
/// ```
/// 0 key(16)  16 segment(4)  20 offset(4)  24 length(4)  28 meta(4): hash(27 bits) << 5 | tag(5 bits)
/// ```
/// A key of up to 16 bytes is stored in the slot itself, zero-padded, and the tag is its
/// length; a longer key's bytes are in `arena` (`KeyArena`), the slot holds their position
/// there (bytes 0–7) and their length (bytes 8–11), and the tag is `longTag`. The tag is 0 in an empty slot (no key is empty).
/// The 27-bit hash is kept so that growing never hashes a key again; comparing the meta
/// word finds almost every mismatch (hash and length at once) without touching a key.
///
/// Linear probing from `hash * capacity >> 27`, at most 80% full; removal shifts later
/// entries back, so there are no tombstones. The capacity is not a power of two: the table
/// is sized exactly when open knows how many keys are coming, which keeps it at 40 bytes per
/// key (plus the bytes of each key over 16 bytes, in the arena). 27 bits of hash spread homes evenly
/// up to about 10^8 slots.
///
/// Copy on write, like the standard collections.
struct KeyTable: Sendable {
  static let slotLength = CaskFormat.checkpointSlotLength
  /// The tag of a slot whose key is in `arena`.
  static let longTag: UInt32 = 31
  /// The longest key stored in the slot itself.
  static let inlineLimit = 16
  private static let tagBits: UInt32 = 5
  static let tagMask: UInt32 = 31
  /// Growth keeps the table at most this full (numerator over 5).
  static let maximumLoadFifths = 4

  var storage: Storage
  /// The bytes of keys over 16 bytes.
  var arena = KeyArena()
  /// What keys are hashed with: the same in every table of a directory.
  let hashKey: KeyHashKey

  /// Number of keys.
  var count = 0

  init(hashKey: KeyHashKey = .process) {
    storage = Storage(capacity: 0)
    self.hashKey = hashKey
  }

  /// The slots allocated (each 32 bytes).
  var capacity: Int { storage.capacity }

  /// Bytes allocated for the slots and the arena of long keys.
  var allocatedBytes: Int { storage.capacity * Self.slotLength + arena.allocatedBytes }

  // MARK: Hashing and slots

  /// The meta word a slot holding `key` has: its 27-bit hash (SipHash-1-3 under the
  /// directory's `hashKey`, `KeyHashKey`) and its tag.
  static func meta(_ key: UnsafeRawBufferPointer, hashKey: KeyHashKey) -> UInt32 {
    let hash = UInt32(truncatingIfNeeded: hashKey.hash(key) >> 37)
    let tag = key.count > inlineLimit ? longTag : UInt32(key.count)
    return hash << tagBits | tag
  }

  /// `meta(_:hashKey:)` under this table's key.
  func meta(_ key: UnsafeRawBufferPointer) -> UInt32 { Self.meta(key, hashKey: hashKey) }

  /// The first slot to probe for an entry with meta word `meta`.
  static func home(_ meta: UInt32, capacity: Int) -> Int {
    Int((UInt64(meta >> tagBits) &* UInt64(capacity)) >> (32 - tagBits))
  }

  func slot(_ index: Int) -> UnsafeMutableRawPointer {
    storage.slots.unsafelyUnwrapped + index &* Self.slotLength
  }

  static func storedMeta(_ slot: UnsafeMutableRawPointer) -> UInt32 {
    slot.load(fromByteOffset: CaskFormat.slotMetaOffset, as: UInt32.self)
  }

  static func tag(_ slot: UnsafeMutableRawPointer) -> UInt32 {
    storedMeta(slot) & tagMask
  }

  static func location(_ slot: UnsafeMutableRawPointer) -> RecordLocation {
    RecordLocation(
      segment: slot.load(fromByteOffset: CaskFormat.slotSegmentOffset, as: UInt32.self),
      offset: slot.load(fromByteOffset: CaskFormat.slotOffsetOffset, as: UInt32.self),
      length: slot.load(fromByteOffset: CaskFormat.slotLengthOffset, as: UInt32.self))
  }

  private static func setLocation(_ location: RecordLocation, in slot: UnsafeMutableRawPointer) {
    slot.storeBytes(of: location.segment, toByteOffset: CaskFormat.slotSegmentOffset, as: UInt32.self)
    slot.storeBytes(of: location.offset, toByteOffset: CaskFormat.slotOffsetOffset, as: UInt32.self)
    slot.storeBytes(of: location.length, toByteOffset: CaskFormat.slotLengthOffset, as: UInt32.self)
  }

  /// The bytes of the long key in `slot`, in the arena, its chunk loaded first; `nil` when
  /// that chunk failed to load (the directory's `damage` says so).
  func longKey(_ slot: UnsafeMutableRawPointer) -> UnsafeRawBufferPointer? {
    arena.bytes(
      at: slot.load(fromByteOffset: CaskFormat.slotLongKeyPositionOffset, as: UInt64.self),
      count: Int(slot.load(fromByteOffset: CaskFormat.slotLongKeyLengthOffset, as: UInt32.self)))
  }

  /// Whether the occupied `slot` holds `key` (whose meta word is `meta`); `nil` when the
  /// chunk of the slot's long key failed to load, so that nothing can be said.
  ///
  /// The meta word (27 bits of hash and the tag) and then a long key's length, both in the
  /// slot, come first: a slot of another key almost never needs its key's bytes, so a probe
  /// of a table loaded from a checkpoint rarely loads a chunk it does not answer from.
  @inline(__always)
  private func matches(_ slot: UnsafeMutableRawPointer, _ key: UnsafeRawBufferPointer, meta: UInt32) -> Bool? {
    guard Self.storedMeta(slot) == meta else { return false }
    if meta & Self.tagMask == Self.longTag {
      let length = slot.load(fromByteOffset: CaskFormat.slotLongKeyLengthOffset, as: UInt32.self)
      guard Int(length) == key.count else { return false }
      guard let stored = longKey(slot) else { return nil }
      return memcmp(stored.baseAddress!, key.baseAddress!, key.count) == 0
    }
    return memcmp(slot, key.baseAddress!, key.count) == 0
  }

  /// The slot holding `key`, or `nil` (also when a page or chunk it needed failed to load:
  /// the directory's `damage` says so).
  ///
  /// The probe visits at most `capacity` slots. Prevents: a table loaded from a checkpoint
  /// whose pages hold more keys than its root counts (found only once every page is loaded)
  /// looping forever on a table with no empty slot.
  private func find(_ key: UnsafeRawBufferPointer, meta: UInt32) -> Int? {
    guard count > 0, let slots = storage.slots else { return nil }
    let capacity = storage.capacity
    return withExtendedLifetime(storage) {
      var index = Self.home(meta, capacity: capacity)
      guard ensureLoaded(index) else { return nil }
      for _ in 0..<capacity {
        let candidate = slots + index &* Self.slotLength
        if Self.tag(candidate) == 0 { return nil }
        guard let match = matches(candidate, key, meta: meta) else { return nil }
        if match { return index }
        index &+= 1
        if index == capacity { index = 0 }
        if index % CaskFormat.checkpointSlotsPerPage == 0 && !ensureLoaded(index) { return nil }
      }
      return nil
    }
  }

  // MARK: Reading

  /// The first slot a lookup of `key` reads, or `nil` in an empty table. Reading it ahead
  /// of the lookup (`KeyDirectory.warm`) overlaps its cache miss with other work; valid until
  /// the table next changes.
  func homeSlot(_ key: UnsafeRawBufferPointer) -> UnsafeRawPointer? {
    guard key.count > 0, let slots = storage.slots else { return nil }
    let home = Self.home(meta(key), capacity: storage.capacity)
    guard ensureLoaded(home) else { return nil }
    return UnsafeRawPointer(slots + home &* Self.slotLength)
  }

  /// The location stored for `key`.
  ///
  /// - Complexity: O(1) on average.
  subscript(key: UnsafeRawBufferPointer) -> RecordLocation? {
    guard key.count > 0, let index = find(key, meta: meta(key)) else { return nil }
    return Self.location(slot(index))
  }

  // MARK: Writing

  /// Makes room for `minimumCapacity` keys in all, without growing again until then.
  ///
  /// - Complexity: O(capacity), when it grows.
  mutating func reserveCapacity(_ minimumCapacity: Int) {
    let needed = (minimumCapacity * 5 + Self.maximumLoadFifths - 1) / Self.maximumLoadFifths + 1
    if needed > storage.capacity { resize(to: needed) }
  }

  /// `reserveCapacity`, but a table that must grow at least doubles: for sizing in steps
  /// whose total is not known up front.
  mutating func reserveCapacity(growingTo minimumCapacity: Int) {
    let needed = (minimumCapacity * 5 + Self.maximumLoadFifths - 1) / Self.maximumLoadFifths + 1
    if needed > storage.capacity { resize(to: Swift.max(needed, storage.capacity * 2)) }
  }

  /// The first slot a lookup of a key whose meta word is `meta` reads (see `homeSlot(_:)`).
  func homeSlot(meta: UInt32) -> UnsafeRawPointer? {
    guard let slots = storage.slots else { return nil }
    let home = Self.home(meta, capacity: storage.capacity)
    guard ensureLoaded(home) else { return nil }
    return UnsafeRawPointer(slots + home &* Self.slotLength)
  }

  /// `updateValue(_:forKey:)` for a key whose meta word (`meta(_:)`) is known: one probe
  /// finds the key or the empty slot it goes into (no tombstones, so a key absent from its
  /// probe run goes into the run's end).
  @discardableResult
  mutating func updateValue(_ location: RecordLocation, forKey key: UnsafeRawBufferPointer, meta: UInt32)
    -> RecordLocation?
  {
    precondition(key.count > 0, "KeyTable: empty key")
    makeUnique()
    if storage.capacity == 0 { resize(to: 16) }
    var capacity = storage.capacity
    var slots = storage.slots.unsafelyUnwrapped
    var index = Self.home(meta, capacity: capacity)
    guard ensureLoaded(index) else { return nil }
    var probed = 0
    while true {
      let candidate = slots + index &* Self.slotLength
      if Self.tag(candidate) == 0 { break }
      // A chunk that failed to load: nothing changed (see `find`).
      guard let match = matches(candidate, key, meta: meta) else { return nil }
      if match {
        let old = Self.location(candidate)
        Self.setLocation(location, in: candidate)
        return old
      }
      index &+= 1
      if index == capacity { index = 0 }
      probed += 1
      // A bounded probe, and no slot written in a page that failed to load (see `find`).
      guard probed < capacity, index % CaskFormat.checkpointSlotsPerPage != 0 || ensureLoaded(index) else {
        return nil
      }
    }
    if (count + 1) * 5 > capacity * Self.maximumLoadFifths {
      guard resize(to: Swift.max(16, capacity * 2)) else { return nil }
      capacity = storage.capacity
      slots = storage.slots.unsafelyUnwrapped
      index = Self.home(meta, capacity: capacity)
      while Self.tag(slots + index &* Self.slotLength) != 0 {
        index &+= 1
        if index == capacity { index = 0 }
      }
    }
    let slot = slots + index &* Self.slotLength
    fill(slot, key: key, meta: meta, location: location)
    return nil
  }

  /// Writes a new key into the empty `slot`: its bytes (inline, or in the arena when longer
  /// than `inlineLimit`), its location and its meta; counts it.
  private mutating func fill(
    _ slot: UnsafeMutableRawPointer, key: UnsafeRawBufferPointer, meta: UInt32, location: RecordLocation
  ) {
    if key.count > Self.inlineLimit {
      slot.storeBytes(of: arena.append(key), toByteOffset: CaskFormat.slotLongKeyPositionOffset, as: UInt64.self)
      slot.storeBytes(of: UInt32(key.count), toByteOffset: CaskFormat.slotLongKeyLengthOffset, as: UInt32.self)
    } else {
      slot.copyMemory(from: key.baseAddress!, byteCount: key.count)
    }
    Self.setLocation(location, in: slot)
    slot.storeBytes(of: meta, toByteOffset: CaskFormat.slotMetaOffset, as: UInt32.self)
    count += 1
    // An insert counts dead bytes too when it leaves a checkpoint's unloaded last chunk
    // behind (`KeyArena.append`): packed here as a removal would pack them.
    if key.count > Self.inlineLimit && arena.wantsPacking { packLongKeys() }
  }

  /// Sets `key`'s location.
  ///
  /// - Returns: the location it replaces, if any.
  /// - Complexity: O(1) on average.
  @discardableResult
  mutating func updateValue(_ location: RecordLocation, forKey key: UnsafeRawBufferPointer) -> RecordLocation? {
    precondition(key.count > 0, "KeyTable: empty key")
    let meta = meta(key)
    makeUnique()
    if let index = find(key, meta: meta) {
      let slot = slot(index)
      let old = Self.location(slot)
      Self.setLocation(location, in: slot)
      return old
    }
    if (count + 1) * 5 > storage.capacity * Self.maximumLoadFifths {
      guard resize(to: Swift.max(16, storage.capacity * 2)) else { return nil }
    }
    var index = Self.home(meta, capacity: storage.capacity)
    guard ensureLoaded(index) else { return nil }
    var probed = 0
    while Self.tag(slot(index)) != 0 {
      index += 1
      if index == storage.capacity { index = 0 }
      probed += 1
      guard probed < storage.capacity, index % CaskFormat.checkpointSlotsPerPage != 0 || ensureLoaded(index) else {
        return nil
      }
    }
    let slot = slot(index)
    fill(slot, key: key, meta: meta, location: location)
    return nil
  }

  /// Removes `key`.
  ///
  /// - Returns: its location, if it was present.
  /// - Complexity: O(1) on average.
  @discardableResult
  mutating func removeValue(forKey key: UnsafeRawBufferPointer) -> RecordLocation? {
    guard key.count > 0 else { return nil }
    let meta = meta(key)
    guard find(key, meta: meta) != nil else { return nil }
    makeUnique()
    guard var hole = find(key, meta: meta) else { return nil }
    let removed = slot(hole)
    let old = Self.location(removed)
    if Self.tag(removed) == Self.longTag {
      arena.release(count: Int(removed.load(fromByteOffset: CaskFormat.slotLongKeyLengthOffset, as: UInt32.self)))
    }
    // Shift back the entries after the hole that may move into it (no tombstones).
    let capacity = storage.capacity
    var index = hole
    for _ in 0..<capacity {
      index += 1
      if index == capacity { index = 0 }
      // A page that fails to load stops the shift: the directory is damaged from then on.
      if index % CaskFormat.checkpointSlotsPerPage == 0 && !ensureLoaded(index) { break }
      let candidate = slot(index)
      if Self.tag(candidate) == 0 { break }
      let home = Self.home(Self.storedMeta(candidate), capacity: capacity)
      // The entry stays if its home lies cyclically in (hole, index].
      let stays = hole <= index ? (hole < home && home <= index) : (hole < home || home <= index)
      if stays { continue }
      slot(hole).copyMemory(from: candidate, byteCount: Self.slotLength)
      hole = index
    }
    slot(hole).initializeMemory(as: UInt8.self, repeating: 0, count: Self.slotLength)
    count -= 1
    if count == 0 {
      arena = KeyArena()
    } else if arena.wantsPacking {
      packLongKeys()
    }
    return old
  }

  private mutating func makeUnique() {
    if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
  }
}

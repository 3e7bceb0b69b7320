/// Walks over every slot of a table. Of a table loaded from a checkpoint, a walk loads every
/// page of slots first; a walk that hands out every key (a listing) loads and checks every
/// chunk of long keys too (`loadEverything`), one that hands out the keys of some entries (a
/// seal's hint, a compaction's) only the chunks of those keys, and one that reads locations
/// alone none. A walk that meets a page or a chunk that fails to load stops there: the
/// directory's `damage` says so, and the store reports it.
extension KeyTable {
  /// Calls `body` with every key and its location, in no particular order.
  ///
  /// - Complexity: O(capacity).
  func forEachEntry(_ body: (String, RecordLocation) throws -> Void) rethrows {
    // Keys are stored only after they were checked to be UTF-8.
    try forEachEntryBytes { key, location in try body(String(decoding: key, as: UTF8.self), location) }
  }

  /// Calls `body` with every key's UTF-8 bytes (valid only during the call) and its location,
  /// in slot order, which is hash order: making no `String`.
  ///
  /// - Complexity: O(capacity).
  func forEachEntryBytes(_ body: (UnsafeRawBufferPointer, RecordLocation) throws -> Void) rethrows {
    guard loadEverything() else { return }
    for index in 0..<storage.capacity {
      let slot = slot(index)
      let tag = Self.tag(slot)
      if tag == 0 { continue }
      guard let key = keyBytes(in: slot, tag: tag) else { return }
      try withExtendedLifetime(storage) { try body(key, Self.location(slot)) }
    }
  }

  /// `forEachEntryBytes` for the keys whose record is in segment `id`.
  ///
  /// - Complexity: O(capacity).
  func forEachEntryBytes(inSegment id: UInt32, _ body: (UnsafeRawBufferPointer, RecordLocation) throws -> Void)
    rethrows
  {
    try forEachEntryBytes(where: { $0.segment == id }, body)
  }

  /// `forEachEntryBytes` for the entries whose location `isIncluded`: of a table loaded from
  /// a checkpoint, only the chunks of those entries' long keys are loaded, each key checked as
  /// it is handed out (`handedOutLongKey`).
  ///
  /// - Complexity: O(capacity).
  func forEachEntryBytes(
    where isIncluded: (RecordLocation) -> Bool, _ body: (UnsafeRawBufferPointer, RecordLocation) throws -> Void
  ) rethrows {
    guard loadAllPages() else { return }
    for index in 0..<storage.capacity {
      let slot = slot(index)
      let tag = Self.tag(slot)
      if tag == 0 { continue }
      let location = Self.location(slot)
      guard isIncluded(location) else { continue }
      let key: UnsafeRawBufferPointer
      if tag == Self.longTag {
        guard let long = handedOutLongKey(slot, at: index) else { return }
        key = long
      } else {
        key = UnsafeRawBufferPointer(start: slot, count: Int(tag))
      }
      try withExtendedLifetime(storage) { try body(key, location) }
    }
  }

  /// Calls `body` with every entry's location, reading no key: of a table loaded from a
  /// checkpoint, no chunk of long keys is loaded.
  ///
  /// - Complexity: O(capacity).
  func forEachLocation(_ body: (RecordLocation) throws -> Void) rethrows {
    guard loadAllPages() else { return }
    for index in 0..<storage.capacity {
      let slot = slot(index)
      if Self.tag(slot) == 0 { continue }
      try body(Self.location(slot))
    }
  }

  /// The key in the occupied `slot` whose tag is `tag`; `nil` when its chunk failed to load.
  private func keyBytes(in slot: UnsafeMutableRawPointer, tag: UInt32) -> UnsafeRawBufferPointer? {
    tag == Self.longTag ? longKey(slot) : UnsafeRawBufferPointer(start: slot, count: Int(tag))
  }
}

/// A table's image as a checkpoint holds it (Docs/FORMAT.md, section 18): its slots as they
/// are in memory and the chunks of its long keys (the arena of a checkpoint's chunks back in
/// is `KeyArena+Lazy.swift`'s). Loading one copies bytes back instead of
/// hashing and placing each key, which is what made open slow (Docs/FORMAT.md, section 13);
/// each page is checked before use (`KeyTable+Lazy.swift`), so that no slot can send a
/// lookup outside the table's memory.
extension KeyTable {
  /// Calls `body` with the slots' bytes (`capacity` × 32), valid during the call. A table
  /// loaded from a checkpoint must have every page loaded (`loadAllPages`) first.
  func withSlotBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withExtendedLifetime(storage) {
      try body(UnsafeRawBufferPointer(start: storage.slots, count: storage.capacity * Self.slotLength))
    }
  }

  /// The chunks of the long keys, their lengths, and the bytes used in the last one. A table
  /// loaded from a checkpoint must have every chunk loaded (`loadEverything`) first.
  var arenaImage: (chunks: [UnsafeRawBufferPointer], used: Int, live: Int, dead: Int) {
    let storage = arena.storage
    let chunks = zip(storage.chunks, storage.lengths).map { UnsafeRawBufferPointer(start: $0, count: $1) }
    return (chunks, storage.used, arena.liveBytes, arena.deadBytes)
  }
}

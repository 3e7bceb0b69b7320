/// How a table grows and packs its long keys: both move every entry, so both load every page
/// of slots of a table read from a checkpoint first, and packing every chunk of long keys.
extension KeyTable {
  /// Copies the long keys still in use into a fresh arena, leaving the removed ones behind.
  ///
  /// - Complexity: O(capacity + bytes of the long keys).
  mutating func packLongKeys() {
    // Every page and chunk first: a page loaded later would name places in the arena packed
    // away.
    guard loadEverything() else { return }
    var packed = KeyArena()
    for index in 0..<storage.capacity {
      let slot = slot(index)
      guard Self.tag(slot) == Self.longTag else { continue }
      guard let key = longKey(slot) else { return }
      slot.storeBytes(of: packed.append(key), toByteOffset: CaskFormat.slotLongKeyPositionOffset, as: UInt64.self)
    }
    arena = packed
  }

  /// Moves every entry into a table of `newCapacity` slots; hashes are not recomputed.
  ///
  /// - Returns: `false` (and nothing changed) when a page of a table loaded from a
  ///   checkpoint failed to load.
  @discardableResult
  mutating func resize(to newCapacity: Int) -> Bool {
    guard loadAllPages() else { return false }
    let old = storage
    let new = Storage(capacity: newCapacity)
    if let from = old.slots, let to = new.slots {
      for index in 0..<old.capacity {
        let source = from + index * Self.slotLength
        if Self.tag(source) == 0 { continue }
        var target = Self.home(Self.storedMeta(source), capacity: newCapacity)
        while Self.tag(to + target * Self.slotLength) != 0 {
          target += 1
          if target == newCapacity { target = 0 }
        }
        (to + target * Self.slotLength).copyMemory(from: source, byteCount: Self.slotLength)
      }
    }
    storage = new
    return true
  }
}

/// A table's image as a checkpoint holds it (Docs/FORMAT.md, section 18): its slots as they
/// are in memory and the chunks of its long keys. Loading one copies bytes back instead of
/// hashing and placing each key, which is what made open slow (Docs/FORMAT.md, section 13);
/// it is checked before use, so that no slot can send a lookup outside the table's memory.
extension KeyTable {
  /// Calls `body` with the slots' bytes (`capacity` × 32), valid during the call.
  func withSlotBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withExtendedLifetime(storage) {
      try body(UnsafeRawBufferPointer(start: storage.slots, count: storage.capacity * Self.slotLength))
    }
  }

  /// The chunks of the long keys, their lengths, and the bytes used in the last one.
  var arenaImage: (chunks: [UnsafeRawBufferPointer], used: Int, live: Int, dead: Int) {
    let storage = arena.storage
    let chunks = zip(storage.chunks, storage.lengths).map { UnsafeRawBufferPointer(start: $0, count: $1) }
    return (chunks, storage.used, arena.liveBytes, arena.deadBytes)
  }

  /// An empty table of `capacity` slots under `hashKey`, to be filled by `fillSlots` and the
  /// chunks of `arena`, then checked with `isCoherent`.
  init(image capacity: Int, hashKey: KeyHashKey, count: Int, arena: KeyArena) {
    self.init(hashKey: hashKey)
    storage = Storage(capacity: capacity)
    self.arena = arena
    self.count = count
  }

  /// Copies `bytes` into the slots from slot `first` on.
  mutating func fillSlots(from first: Int, with bytes: UnsafeRawBufferPointer) {
    guard let slots = storage.slots, let base = bytes.baseAddress else { return }
    (slots + first * Self.slotLength).copyMemory(from: base, byteCount: bytes.count)
  }

  /// Whether the loaded image is one the table could have been: at most 80% full (so every
  /// probe ends at an empty slot), exactly `count` slots in use, each with a known tag, each
  /// long key inside its chunk, each location inside a segment `lengths` lists; and every
  /// `sampleEvery`-th key hashed again to its stored meta word (a wrong hash key would make
  /// keys unfindable).
  ///
  /// - Complexity: O(capacity), plus one hash per `sampleEvery` keys.
  func isCoherent(segmentLengths lengths: [UInt32: UInt64], sampleEvery: Int) -> Bool {
    guard count * 5 <= capacity * Self.maximumLoadFifths, count < capacity || capacity == 0 else { return false }
    let storage = arena.storage
    var used = 0
    var coherent = true
    // The segment of the slot before, and its length: most neighbours share a segment, and a
    // dictionary lookup per slot was a tenth of the load.
    var lastSegment: UInt32?
    var lastLength: UInt64 = 0
    withSlotBytes { slots in
      for index in 0..<capacity {
        let offset = index * Self.slotLength
        let meta = slots.load(fromByteOffset: offset + CaskFormat.slotMetaOffset, as: UInt32.self)
        let tag = meta & Self.tagMask
        if tag == 0 { continue }
        used += 1
        let key: UnsafeRawBufferPointer
        if tag == Self.longTag {
          let position = slots.load(fromByteOffset: offset + CaskFormat.slotLongKeyPositionOffset, as: UInt64.self)
          let length = Int(slots.load(fromByteOffset: offset + CaskFormat.slotLongKeyLengthOffset, as: UInt32.self))
          let chunk = Int(position >> 32)
          let start = Int(position & 0xFFFF_FFFF)
          guard length > Self.inlineLimit, length <= CaskFormat.maximumKeyLength, chunk < storage.chunks.count,
            start + length <= storage.lengths[chunk]
          else {
            coherent = false
            return
          }
          key = UnsafeRawBufferPointer(start: storage.chunks[chunk] + start, count: length)
        } else if tag <= UInt32(Self.inlineLimit) {
          key = UnsafeRawBufferPointer(rebasing: slots[offset..<offset + Int(tag)])
        } else {
          coherent = false
          return
        }
        let segment = slots.load(fromByteOffset: offset + CaskFormat.slotSegmentOffset, as: UInt32.self)
        let recordOffset = UInt64(slots.load(fromByteOffset: offset + CaskFormat.slotOffsetOffset, as: UInt32.self))
        let recordLength = UInt64(slots.load(fromByteOffset: offset + CaskFormat.slotLengthOffset, as: UInt32.self))
        if segment != lastSegment {
          guard let length = lengths[segment] else {
            coherent = false
            return
          }
          lastSegment = segment
          lastLength = length
        }
        guard recordOffset >= UInt64(CaskFormat.segmentHeaderLength), recordOffset + recordLength <= lastLength,
          used % sampleEvery != 1 % sampleEvery || Self.meta(key, hashKey: hashKey) == meta
        else {
          coherent = false
          return
        }
      }
    }
    return coherent && used == count
  }
}

extension KeyArena {
  /// An arena of the chunks a checkpoint held.
  init(chunks: [[UInt8]], used: Int, live: Int, dead: Int) {
    for chunk in chunks {
      let pointer = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(1, chunk.count), alignment: 8)
      chunk.withUnsafeBytes { if let base = $0.baseAddress { pointer.copyMemory(from: base, byteCount: $0.count) } }
      storage.chunks.append(pointer)
      storage.lengths.append(chunk.count)
    }
    storage.used = used
    liveBytes = live
    deadBytes = dead
  }
}

/// The bytes of a `KeyTable`'s keys over 16 bytes, packed one after another in chunks, so that a
/// long key costs its own bytes and nothing per key besides (no object, no allocation header).
///
/// A key is placed whole in one chunk and named by its position, `chunk << 32 | offset`. Chunks
/// grow from 256 bytes, doubling, to 64 KiB, so a small group's table stays small; a chunk is
/// never shorter than the key placed in it (keys are at most 65,535 bytes). Removing a key
/// only counts its bytes as dead; once dead bytes pass the live ones the table packs its keys
/// into a fresh arena (`KeyTable.packLongKeys`), which keeps dead space at most about half.
///
/// Copy on write, like the table around it.
struct KeyArena: Sendable {
  static let firstChunkLength = 256
  static let largestChunkLength = 64 << 10

  final class Storage: @unchecked Sendable {
    // Changed only through a uniquely referenced `KeyArena`.
    var chunks: [UnsafeMutableRawPointer] = []
    var lengths: [Int] = []
    /// Bytes used in the last chunk.
    var used = 0

    deinit {
      for chunk in chunks { chunk.deallocate() }
    }

    func copy() -> Storage {
      let copy = Storage()
      for (chunk, length) in zip(chunks, lengths) {
        let target = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 8)
        target.copyMemory(from: chunk, byteCount: length)
        copy.chunks.append(target)
        copy.lengths.append(length)
      }
      copy.used = used
      return copy
    }
  }

  var storage = Storage()
  /// Bytes of keys placed here and still in use.
  var liveBytes = 0
  /// Bytes of keys placed here and since removed.
  var deadBytes = 0

  /// Bytes allocated for chunks.
  var allocatedBytes: Int { storage.lengths.reduce(0, +) }

  /// The bytes of the key at `position`, `count` long; valid until the arena next changes.
  func bytes(at position: UInt64, count: Int) -> UnsafeRawBufferPointer {
    let chunk = storage.chunks[Int(position >> 32)]
    return UnsafeRawBufferPointer(start: chunk + Int(position & 0xFFFF_FFFF), count: count)
  }

  /// Copies `key` in and returns its position.
  ///
  /// - Complexity: O(key length).
  mutating func append(_ key: UnsafeRawBufferPointer) -> UInt64 {
    if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    let lastLength = storage.lengths.last ?? 0
    if storage.chunks.isEmpty || storage.used + key.count > lastLength {
      let next = Swift.min(Swift.max(Self.firstChunkLength, lastLength * 2), Self.largestChunkLength)
      let length = Swift.max(next, key.count)
      // Zeroed: a checkpoint writes chunks whole (`KeyTable.arenaImage`), and the unused tail
      // must not carry whatever the allocator last held there.
      let chunk = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 8)
      chunk.initializeMemory(as: UInt8.self, repeating: 0, count: length)
      storage.chunks.append(chunk)
      storage.lengths.append(length)
      storage.used = 0
    }
    let offset = storage.used
    if let base = key.baseAddress, key.count > 0 {
      (storage.chunks[storage.chunks.count - 1] + offset).copyMemory(from: base, byteCount: key.count)
    }
    storage.used += key.count
    liveBytes += key.count
    return UInt64(storage.chunks.count - 1) << 32 | UInt64(offset)
  }

  /// Counts a removed key's bytes as dead.
  mutating func release(count: Int) {
    liveBytes -= count
    deadBytes += count
  }

  /// Whether enough is dead that packing the live keys into a fresh arena pays.
  var wantsPacking: Bool { deadBytes > Swift.max(liveBytes, Self.largestChunkLength) }
}

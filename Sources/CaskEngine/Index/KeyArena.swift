/// The bytes of a `KeyTable`'s keys over 16 bytes, packed one after another in chunks, so that a
/// long key costs its own bytes and nothing per key besides (no object, no allocation header).
///
/// A key is placed whole in one chunk and named by its position, `chunk << 32 | offset`. Chunks
/// grow from 256 bytes, doubling, to 64 KiB, so a small group's table stays small; a chunk is
/// never shorter than the key placed in it (keys are at most 65,535 bytes). Removing a key
/// only counts its bytes as dead; once dead bytes pass the live ones the table packs its keys
/// into a fresh arena (`KeyTable.packLongKeys`), which keeps dead space at most about half.
///
/// The arena of a table loaded from a checkpoint reserves the checkpoint's chunks and reads
/// each the first time a key in it is needed (`KeyArena+Lazy.swift`).
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
    /// The checkpoint's chunks still to load (`KeyArena+Lazy.swift`); `nil` for an arena whose
    /// chunks are all here.
    let lazy: LazyChunks?
    /// The block holding the first `reservedChunks` chunks (a checkpoint's), freed whole.
    let block: UnsafeMutableRawPointer?
    let reservedChunks: Int

    init() {
      lazy = nil
      block = nil
      reservedChunks = 0
    }

    /// An arena of chunks of `lengths`, reserved in one block and left as allocated (memory
    /// never touched costs nothing), each written whole by its load before anything reads it.
    init(reserving lengths: [Int], used: Int, lazy: LazyChunks) {
      self.lazy = lazy
      // Each chunk starts 8-aligned, as one allocated alone would.
      let starts = lengths.reduce(into: [0]) { starts, length in
        starts.append(starts[starts.count - 1] + (length + 7) / 8 * 8)
      }
      let block = UnsafeMutableRawPointer.allocate(byteCount: Swift.max(8, starts[lengths.count]), alignment: 8)
      self.block = block
      reservedChunks = lengths.count
      chunks = lengths.indices.map { block + starts[$0] }
      self.lengths = lengths
      self.used = used
    }

    deinit {
      for chunk in chunks[reservedChunks...] { chunk.deallocate() }
      block?.deallocate()
    }

    func copy() -> Storage {
      if let lazy { return lazy.copy(of: self) }
      let copy = Storage()
      copy.append(copiesOf: self, from: 0)
      return copy
    }

    /// Appends a copy of each of `other`'s chunks from `first` on, and takes its `used`.
    func append(copiesOf other: Storage, from first: Int) {
      for (chunk, length) in zip(other.chunks[first...], other.lengths[first...]) {
        let target = UnsafeMutableRawPointer.allocate(byteCount: length, alignment: 8)
        target.copyMemory(from: chunk, byteCount: length)
        chunks.append(target)
        lengths.append(length)
      }
      used = other.used
    }
  }

  var storage = Storage()
  /// Bytes of keys placed here and still in use.
  var liveBytes = 0
  /// Bytes of keys placed here and since removed.
  var deadBytes = 0

  /// Bytes allocated for chunks.
  var allocatedBytes: Int { storage.lengths.reduce(0, +) }

  /// The bytes of the key at `position`, `count` long, its chunk loaded first; valid until
  /// the arena next changes. `nil` when the chunk failed to load (the checkpoint's `damage`
  /// says so).
  func bytes(at position: UInt64, count: Int) -> UnsafeRawBufferPointer? {
    let number = Int(position >> 32)
    guard ensureLoaded(chunk: number) else { return nil }
    return UnsafeRawBufferPointer(start: storage.chunks[number] + Int(position & 0xFFFF_FFFF), count: count)
  }

  /// Copies `key` in and returns its position.
  ///
  /// - Complexity: O(key length).
  mutating func append(_ key: UnsafeRawBufferPointer) -> UInt64 {
    if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    let lastLength = storage.lengths.last ?? 0
    // A checkpoint's last chunk that is not loaded takes no key: a new chunk starts, and the
    // rest of that one counts as dead, so that packing takes it back once enough is dead.
    // Prevents: the first insert into each table after an open from a checkpoint reading and
    // decrypting up to 64 KiB to append a few bytes. (One that failed to load takes none
    // either: the index is damaged from then on.)
    let lastTakesKeys = !storage.chunks.isEmpty && isLoaded(chunk: storage.chunks.count - 1)
    if !lastTakesKeys && !storage.chunks.isEmpty { deadBytes += lastLength - storage.used }
    if !lastTakesKeys || storage.used + key.count > lastLength {
      let next = Swift.min(Swift.max(Self.firstChunkLength, lastLength * 2), Self.largestChunkLength)
      let length = Swift.max(next, key.count)
      // Zeroed: a copy of the arena (`Storage.copy`) copies chunks whole, unused tail included,
      // and must not read bytes nothing wrote.
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

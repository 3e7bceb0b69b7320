#if canImport(Glibc)
  import Glibc
#endif

/// A table as a checkpoint writes it (Docs/FORMAT.md, section 18): its long keys packed afresh
/// into chunks in byte order, each chunk's keys prefix-compressed, and its slots, each long
/// key's position the one it has in those chunks, written sparsely (a bitmap of the used
/// slots, then only those). The table in memory is left as it is.
///
/// Why: the typed collections' index keys are 40–80 bytes that begin with their group's
/// name, and an index table is half to four fifths full, so a table written as it lies in
/// memory cost about three times its keys' own information (section 13).
struct CheckpointTableImage {
  /// Each chunk's length once decoded (the root lists it) and its page's contents.
  private(set) var chunks: [(length: Int, contents: [UInt8])] = []
  /// Bytes of the long keys, all in `chunks`.
  private(set) var liveBytes = 0
  /// Each long key's position in `chunks`, by slot number (other slots: 0).
  private var positions: [UInt64]
  private let table: KeyTable

  /// The image of `table`, every page and chunk of which must be loaded.
  ///
  /// - Complexity: O(capacity + m log m) for the table's m long keys.
  init(_ table: KeyTable) {
    self.table = table
    positions = []
    var long: [(key: UnsafeRawBufferPointer, slot: Int)] = []
    for index in 0..<table.capacity {
      let slot = table.slot(index)
      guard KeyTable.tag(slot) == KeyTable.longTag, let key = table.longKey(slot) else { continue }
      long.append((key, index))
    }
    guard !long.isEmpty else { return }
    positions = [UInt64](repeating: 0, count: table.capacity)
    // In byte order, neighbours share most of their bytes (a group's name, an index text).
    long.sort { SortedKeyOrder.compare($0.key, $1.key) < 0 }
    var page = ByteWriter()
    var used = 0
    var previous: UnsafeRawBufferPointer?
    for (key, slot) in long {
      if used > 0, used + key.count > KeyArena.largestChunkLength {
        chunks.append((used, page.bytes))
        page = ByteWriter()
        used = 0
        previous = nil
      }
      var shared = 0
      if let previous {
        let limit = min(previous.count, key.count)
        while shared < limit, previous[shared] == key[shared] { shared += 1 }
      }
      page.append(UInt16(shared))
      page.append(UInt16(key.count - shared))
      page.append(contentsOf: UnsafeRawBufferPointer(rebasing: key[shared...]))
      positions[slot] = UInt64(chunks.count) << 32 | UInt64(used)
      used += key.count
      liveBytes += key.count
      previous = key
    }
    chunks.append((used, page.bytes))
  }

  /// The contents of the slot page of `count` slots from `first`: the bitmap of the used ones
  /// (bit `i % 8` of byte `i / 8` for slot `first + i`), then each used slot's 32 bytes, a
  /// long key's position replaced by its place in `chunks`.
  func slotPage(first: Int, count: Int) -> [UInt8] {
    let length = KeyTable.slotLength
    var bitmap = [UInt8](repeating: 0, count: Self.bitmapLength(slots: count))
    var slots: [UInt8] = []
    for index in first..<first + count {
      let slot = table.slot(index)
      let tag = KeyTable.tag(slot)
      guard tag != 0 else { continue }
      bitmap[(index - first) / 8] |= 1 << UInt8((index - first) % 8)
      let start = slots.count
      slots.append(contentsOf: UnsafeRawBufferPointer(start: slot, count: length))
      if tag == KeyTable.longTag {
        withUnsafeBytes(of: positions[index].littleEndian) {
          slots.replaceSubrange(start..<start + 8, with: $0)
        }
      }
    }
    return withExtendedLifetime(table) { bitmap + slots }
  }

  static func bitmapLength(slots: Int) -> Int { (slots + 7) / 8 }

  /// The longest contents a slot page of `count` slots can have.
  static func maximumSlotPageLength(slots count: Int) -> Int {
    bitmapLength(slots: count) + count * KeyTable.slotLength
  }

  /// The longest contents a chunk of `length` bytes can have: every key is over 16 bytes.
  static func maximumChunkPageLength(length: Int) -> Int {
    length + CaskFormat.checkpointSortedKeyHeadLength * (length / (KeyTable.inlineLimit + 1) + 1)
  }

  /// Writes the `count` slots a slot page's `contents` give into `slots` (`count` × 32 bytes,
  /// the unused ones zeroed).
  ///
  /// - Returns: `false` unless the contents are exactly a bitmap and one slot per bit set.
  static func expandSlots(_ contents: UnsafeRawBufferPointer, count: Int, into slots: UnsafeMutableRawBufferPointer)
    -> Bool
  {
    let bitmap = bitmapLength(slots: count)
    guard contents.count >= bitmap, slots.count == count * KeyTable.slotLength else { return false }
    var used = 0
    for byte in contents[0..<bitmap] { used += byte.nonzeroBitCount }
    // No bit may name a slot past the page's last.
    guard contents.count == bitmap + used * KeyTable.slotLength,
      count % 8 == 0 || contents[bitmap - 1] >> UInt8(count % 8) == 0
    else { return false }
    slots.initializeMemory(as: UInt8.self, repeating: 0)
    var from = bitmap
    for index in 0..<count where contents[index / 8] & (1 << UInt8(index % 8)) != 0 {
      let start = index * KeyTable.slotLength
      UnsafeMutableRawBufferPointer(rebasing: slots[start..<start + KeyTable.slotLength]).copyMemory(
        from: UnsafeRawBufferPointer(rebasing: contents[from..<from + KeyTable.slotLength]))
      from += KeyTable.slotLength
    }
    return true
  }

  /// Writes the keys a chunk page's `contents` give, back to back, into `chunk` (`length` bytes).
  ///
  /// - Returns: `false` unless the keys decode exactly to the end of the contents and fill
  ///   exactly `length` bytes, each key over 16 bytes and sharing no more than the key before.
  static func decodeChunk(_ contents: UnsafeRawBufferPointer, into chunk: UnsafeMutableRawPointer, length: Int)
    -> Bool
  {
    var reader = ByteReader(contents)
    var written = 0
    var previous: (start: Int, count: Int)?
    while reader.remaining > 0 {
      guard let shared = reader.readUInt16().map(Int.init), let rest = reader.readUInt16().map(Int.init),
        shared <= (previous?.count ?? 0), shared + rest > KeyTable.inlineLimit, written + shared + rest <= length,
        let bytes = reader.readBytes(rest)
      else { return false }
      if let previous, shared > 0 { memmove(chunk + written, chunk + previous.start, shared) }
      if let base = bytes.baseAddress, rest > 0 { (chunk + written + shared).copyMemory(from: base, byteCount: rest) }
      previous = (written, shared + rest)
      written += shared + rest
    }
    return written == length
  }
}

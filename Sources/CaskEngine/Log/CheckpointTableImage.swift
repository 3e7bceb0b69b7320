#if canImport(Glibc)
  import Glibc
#endif

/// A table as a checkpoint writes it (Docs/FORMAT.md, section 18): its long keys packed afresh
/// into chunks in byte order, each chunk's keys prefix-compressed, and its slots, each long
/// key's position the one it has in those chunks, written sparsely (a bitmap of the used
/// slots, then only those, each without its zero bytes). The table in memory is left as it is.
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

  /// The contents of the slot page of `count` slots from `first` (`encodeSlots`), a long
  /// key's position replaced by its place in `chunks`.
  func slotPage(first: Int, count: Int) -> [UInt8] {
    var dense = [UInt8](repeating: 0, count: count * KeyTable.slotLength)
    withExtendedLifetime(table) {
      dense.withUnsafeMutableBytes { dense in
        dense.copyMemory(from: UnsafeRawBufferPointer(start: table.slot(first), count: dense.count))
        for index in first..<first + count where KeyTable.tag(table.slot(index)) == KeyTable.longTag {
          dense.storeBytes(
            of: positions[index].littleEndian, toByteOffset: (index - first) * KeyTable.slotLength, as: UInt64.self)
        }
      }
    }
    return dense.withUnsafeBytes { Self.encodeSlots($0) }
  }

  /// A slots page's contents for `dense` slots (32 bytes each, an unused one's tag 0): the
  /// bitmap of the used ones (bit `i % 8` of byte `i / 8` for slot `i`), then each used slot as
  /// a mask (4) whose bit `j` says that the slot's byte `j` (0 ..< 28) is not zero, those bytes,
  /// and the meta word (4).
  static func encodeSlots(_ dense: UnsafeRawBufferPointer) -> [UInt8] {
    let count = dense.count / KeyTable.slotLength
    let meta = CaskFormat.slotMetaOffset
    var bitmap = [UInt8](repeating: 0, count: bitmapLength(slots: count))
    var slots: [UInt8] = []
    for index in 0..<count {
      let slot = UnsafeRawBufferPointer(
        rebasing: dense[index * KeyTable.slotLength..<(index + 1) * KeyTable.slotLength])
      guard slot[meta] & UInt8(KeyTable.tagMask) != 0 else { continue }
      bitmap[index / 8] |= 1 << UInt8(index % 8)
      var mask: UInt32 = 0
      for byte in 0..<meta where slot[byte] != 0 { mask |= 1 << UInt32(byte) }
      withUnsafeBytes(of: mask.littleEndian) { slots.append(contentsOf: $0) }
      for byte in 0..<meta where slot[byte] != 0 { slots.append(slot[byte]) }
      slots.append(contentsOf: slot[meta...])
    }
    return bitmap + slots
  }

  static func bitmapLength(slots: Int) -> Int { (slots + 7) / 8 }

  /// The longest contents a slot page of `count` slots can have.
  static func maximumSlotPageLength(slots count: Int) -> Int {
    bitmapLength(slots: count) + count * (4 + KeyTable.slotLength)
  }

  /// The longest contents a chunk of `length` bytes can have: every key is over 16 bytes.
  static func maximumChunkPageLength(length: Int) -> Int {
    length + CaskFormat.checkpointSortedKeyHeadLength * (length / (KeyTable.inlineLimit + 1) + 1)
  }

  /// Writes the `count` slots a slot page's `contents` give into `slots` (`count` × 32 bytes,
  /// the unused ones zeroed).
  ///
  /// - Returns: `false` unless the contents are exactly a bitmap and one slot per bit set,
  ///   each slot's mask naming only bytes 0 ..< 28 and only bytes written as not zero, and each
  ///   slot's tag not zero (a used slot).
  static func expandSlots(_ contents: UnsafeRawBufferPointer, count: Int, into slots: UnsafeMutableRawBufferPointer)
    -> Bool
  {
    let bitmap = bitmapLength(slots: count)
    guard contents.count >= bitmap, slots.count == count * KeyTable.slotLength,
      // No bit may name a slot past the page's last.
      count % 8 == 0 || contents[bitmap - 1] >> UInt8(count % 8) == 0
    else { return false }
    slots.initializeMemory(as: UInt8.self, repeating: 0)
    var reader = ByteReader(contents, offset: bitmap)
    let meta = CaskFormat.slotMetaOffset
    for index in 0..<count where contents[index / 8] & (1 << UInt8(index % 8)) != 0 {
      guard let mask = reader.readUInt32(), mask >> UInt32(meta) == 0,
        let bytes = reader.readBytes(mask.nonzeroBitCount), !bytes.contains(0),
        let metaWord = reader.readBytes(KeyTable.slotLength - meta), metaWord[0] & UInt8(KeyTable.tagMask) != 0
      else { return false }
      let slot = index * KeyTable.slotLength
      var next = 0
      for byte in 0..<meta where mask & (1 << UInt32(byte)) != 0 {
        slots[slot + byte] = bytes[next]
        next += 1
      }
      UnsafeMutableRawBufferPointer(rebasing: slots[slot + meta..<slot + KeyTable.slotLength]).copyMemory(
        from: metaWord)
    }
    return reader.remaining == 0
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

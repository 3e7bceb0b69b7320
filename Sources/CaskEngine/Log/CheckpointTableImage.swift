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
  /// Each chunk's length once decoded (the root lists it) and its page's contents (none for a
  /// sorted group's table: its chunks are made again from its sorted pages).
  private(set) var chunks: [(length: Int, contents: [UInt8])] = []
  /// Bytes of the long keys, all in `chunks`.
  private(set) var liveBytes = 0
  /// A sorted group's table only: the contents of its sorted pages (each key without the
  /// group's name and U+0000), and for each chunk the rank of its first key among the group's
  /// keys in order, which the root lists so that a chunk is made again from the sorted pages
  /// that hold its keys.
  private(set) var sortedPages: [(contents: [UInt8], count: Int, firstKey: [UInt8])] = []
  private(set) var chunkStarts: [Int] = []
  /// Each long key's position in `chunks`, by slot number (other slots: 0).
  private var positions: [UInt64]
  private let table: KeyTable

  /// The image of `table`, every page and chunk of which must be loaded. For a sorted group's
  /// table (`sortedGroup`, the group's name), its sorted pages too, from the same order: so the
  /// chunks a reader makes again from those pages are exactly the ones the slots point into.
  ///
  /// - Complexity: O(capacity + m log m) for the table's m long keys (every key, for a sorted
  ///   group).
  init(_ table: KeyTable, sortedGroup name: [UInt8]? = nil, limits: Checkpoint.PageLimits = .init()) {
    self.table = table
    positions = []
    // Every key of a sorted group (the short ones live in their slots), only the long keys of
    // another table.
    var keys: [(key: UnsafeRawBufferPointer, slot: Int)] = []
    for index in 0..<table.capacity {
      let slot = table.slot(index)
      let tag = KeyTable.tag(slot)
      if tag == KeyTable.longTag, let key = table.longKey(slot) {
        keys.append((key, index))
      } else if name != nil, tag != 0, tag <= UInt32(KeyTable.inlineLimit) {
        keys.append((UnsafeRawBufferPointer(start: slot, count: Int(tag)), index))
      }
    }
    // In byte order, neighbours share most of their bytes (a group's name, an index text).
    keys.sort { SortedKeyOrder.compare($0.key, $1.key) < 0 }
    if let name {
      var builder = SortedKeyPages.Builder(target: limits.sortedPage)
      for (key, _) in keys where key.count > name.count {
        builder.append(UnsafeRawBufferPointer(rebasing: key[(name.count + 1)...]))
      }
      sortedPages = builder.finish()
    }
    guard keys.contains(where: { $0.key.count > KeyTable.inlineLimit }) else { return }
    positions = [UInt64](repeating: 0, count: table.capacity)
    var page = ByteWriter()
    var used = 0
    var previous: UnsafeRawBufferPointer?
    for (rank, (key, slot)) in keys.enumerated() where key.count > KeyTable.inlineLimit {
      if used > 0, used + key.count > limits.chunk {
        chunks.append((used, name == nil ? page.bytes : []))
        page = ByteWriter()
        used = 0
        previous = nil
      }
      if used == 0 { chunkStarts.append(rank) }
      if name == nil {
        var shared = 0
        if let previous {
          let limit = min(previous.count, key.count)
          while shared < limit, previous[shared] == key[shared] { shared += 1 }
        }
        page.append(UInt16(shared))
        page.append(UInt16(key.count - shared))
        page.append(contentsOf: UnsafeRawBufferPointer(rebasing: key[shared...]))
      }
      positions[slot] = UInt64(chunks.count) << 32 | UInt64(used)
      used += key.count
      liveBytes += key.count
      previous = key
    }
    chunks.append((used, name == nil ? page.bytes : []))
    if name == nil { chunkStarts = [] }
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

  /// Writes into `chunk` (`length` bytes) the keys of a sorted group's chunk as the writer
  /// packed them: from rank `start` on, each key of the group's sorted pages (read through
  /// `base`) behind the group's `name` and U+0000, passing over the keys of 16 bytes or fewer
  /// (their slots hold them), until the chunk is full.
  ///
  /// - Returns: `false` unless the keys fill exactly `length` bytes.
  /// - Throws: `CaskError.corrupt` when a sorted page fails (the pages record it).
  static func rebuildChunk(
    from base: SortedGroupBase, group name: [UInt8], start: Int, into chunk: UnsafeMutableRawPointer, length: Int
  ) throws -> Bool {
    let prefix = name.count + 1
    var written = 0
    var rank = start
    while written < length, rank < base.count {
      let (index, first) = base.locate(rank: rank)
      let page = try base.page(index)
      for key in first..<page.count {
        let added = page.withKey(key) { suffix -> Int? in
          let count = prefix + suffix.count
          guard count > KeyTable.inlineLimit else { return 0 }
          guard written + count <= length else { return nil }
          name.withUnsafeBytes { (chunk + written).copyMemory(from: $0.baseAddress!, byteCount: name.count) }
          (chunk + written + name.count).storeBytes(of: 0, as: UInt8.self)
          if let bytes = suffix.baseAddress {
            (chunk + written + prefix).copyMemory(from: bytes, byteCount: suffix.count)
          }
          return count
        }
        guard let added else { return false }
        written += added
        rank += 1
        if written == length { return true }
      }
    }
    return written == length
  }
}

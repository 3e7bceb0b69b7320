/// A hint's entries packed for writing: their fixed fields in one array and their keys' bytes
/// back to back in another. Prevents: a `String` (an allocation, a retain and a release) per
/// entry when a full segment's hint is built from the index, which cost a single put at
/// 1,000,000 keys about a tenth of its time on the writer's thread.
struct HintEntries: Sendable {
  /// One entry's fields; its key is `keyBytes[previous keyEnd..<keyEnd]`.
  private struct Fields {
    var offset: UInt32
    var length: UInt32
    var keyEnd: UInt32
    var isDelete: Bool
    /// Its attachment section is `attachedBytes[previous attachedEnd..<attachedEnd]`.
    var attachedEnd: UInt32 = 0
  }

  private var fields: [Fields] = []
  private var keyBytes: [UInt8] = []
  /// The attachment sections of puts whose records carry attached keys, back to back.
  private var attachedBytes: [UInt8] = []

  init() {}

  init(_ entries: some Sequence<HintEntry>) {
    for entry in entries { append(entry) }
  }

  var count: Int { fields.count }
  /// The bytes of all keys together.
  var keyByteCount: Int { keyBytes.count }

  mutating func reserveCapacity(_ entries: Int, keyBytes bytes: Int) {
    fields.reserveCapacity(entries)
    keyBytes.reserveCapacity(bytes)
  }

  /// Appends an entry whose key is the UTF-8 `key`.
  mutating func append(
    isDelete: Bool, offset: UInt32, length: UInt32, key: UnsafeRawBufferPointer,
    attached: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)
  ) {
    keyBytes.append(contentsOf: key)
    attachedBytes.append(contentsOf: attached)
    fields.append(
      Fields(
        offset: offset, length: length, keyEnd: UInt32(keyBytes.count), isDelete: isDelete,
        attachedEnd: UInt32(attachedBytes.count)))
  }

  mutating func append(_ entry: HintEntry) {
    IndexKey.withUTF8(of: entry.key) { key in
      entry.attached.withUnsafeBytes {
        append(isDelete: entry.isDelete, offset: entry.offset, length: entry.length, key: key, attached: $0)
      }
    }
  }

  mutating func append(contentsOf other: HintEntries) {
    other.forEachEntryWithSection { isDelete, offset, length, key, attached in
      append(isDelete: isDelete, offset: offset, length: length, key: key, attached: attached)
    }
  }

  /// Whether any entry has an attachment section.
  var hasAttachments: Bool { !attachedBytes.isEmpty }

  /// `forEachEntry`, with each entry's attachment section (empty for none).
  func forEachEntryWithSection(
    _ body: (
      _ isDelete: Bool, _ offset: UInt32, _ length: UInt32, _ key: UnsafeRawBufferPointer,
      _ attached: UnsafeRawBufferPointer
    ) throws -> Void
  ) rethrows {
    try keyBytes.withUnsafeBytes { keys in
      try attachedBytes.withUnsafeBytes { sections in
        for position in fields.indices {
          let field = fields[position]
          let sectionStart = position == 0 ? 0 : Int(fields[position - 1].attachedEnd)
          try body(
            field.isDelete, field.offset, field.length, UnsafeRawBufferPointer(rebasing: keys[keyRange(of: position)]),
            UnsafeRawBufferPointer(rebasing: sections[sectionStart..<Int(field.attachedEnd)]))
        }
      }
    }
  }

  /// Calls `body` with each entry in order: whether it is a delete, its record's offset and
  /// length, and its key's bytes (valid only during the call).
  func forEachEntry(
    _ body: (_ isDelete: Bool, _ offset: UInt32, _ length: UInt32, _ key: UnsafeRawBufferPointer) throws -> Void
  ) rethrows {
    try keyBytes.withUnsafeBytes { keys in
      for position in fields.indices {
        let field = fields[position]
        try body(
          field.isDelete, field.offset, field.length, UnsafeRawBufferPointer(rebasing: keys[keyRange(of: position)]))
      }
    }
  }

  /// Where entry `position`'s key lies in `keyBytes`.
  private func keyRange(of position: Int) -> Range<Int> {
    (position == 0 ? 0 : Int(fields[position - 1].keyEnd))..<Int(fields[position].keyEnd)
  }

  /// The same entries in the order of their records' offsets (entries of one offset keep
  /// their order).
  ///
  /// - Complexity: O(n log n).
  func sortedByOffset() -> HintEntries {
    // One 64-bit word per entry (offset, then position) sorts without moving any key.
    var order = [UInt64]()
    order.reserveCapacity(fields.count)
    for (position, field) in fields.enumerated() { order.append(UInt64(field.offset) << 32 | UInt64(position)) }
    order.sort()
    var sorted = HintEntries()
    sorted.reserveCapacity(fields.count, keyBytes: keyBytes.count)
    keyBytes.withUnsafeBytes { keys in
      attachedBytes.withUnsafeBytes { sections in
        for word in order {
          let position = Int(word & 0xFFFF_FFFF)
          let field = fields[position]
          let sectionStart = position == 0 ? 0 : Int(fields[position - 1].attachedEnd)
          sorted.append(
            isDelete: field.isDelete, offset: field.offset, length: field.length,
            key: UnsafeRawBufferPointer(rebasing: keys[keyRange(of: position)]),
            attached: UnsafeRawBufferPointer(rebasing: sections[sectionStart..<Int(field.attachedEnd)]))
        }
      }
    }
    return sorted
  }

  /// Every entry, each with its key as a `String` (for readers that keep entries one by one).
  var list: [HintEntry] {
    var entries: [HintEntry] = []
    entries.reserveCapacity(count)
    forEachEntryWithSection { isDelete, offset, length, key, attached in
      entries.append(
        HintEntry(
          isDelete: isDelete, offset: offset, length: length, key: String(decoding: key, as: UTF8.self),
          attached: Array(attached)))
    }
    return entries
  }
}

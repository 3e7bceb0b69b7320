import Foundation
import RNCryptorCodec

/// One entry of a hint file: where a record of a sealed segment is, and its key.
struct HintEntry: Sendable {
  var isDelete: Bool
  var offset: UInt32
  var length: UInt32
  var key: String
  /// The attachment section of a put whose record carries attached keys; empty for none.
  var attached: [UInt8] = []
}

/// A hint file lets open index a sealed segment without decrypting every record
/// (Docs/FORMAT.md, "Hint files").
///
/// ```
/// 0 magic "CCHINTS2" or "CCHINTS3"(8)   8 RNCryptor v3 key message under the data key, whose plaintext is:
///   [version 3: tag 'H'(1)] version(2) reserved(2) segment id(4) segment length(8) max sequence(8) entry count(4)
///   ungrouped puts(4) groups listed(2), each: puts(4) name length(2) name   (within the first 4,096 bytes)
///   ["CCHINTS3": names(2), each: name length(2) name]
///   entries: type(1) reserved(1) key length(2) record offset(4) record length(4) key(key length)
///     [type 3, a put with attached keys (version 5): section length(4) section]
/// ```
/// A "CCHINTS3" hint has, after the group section, a table of the group names its type 3
/// entries' sections use: names(2), each: length(2) name; each such section then gives a
/// group's number in that table where it would spell the group's name length and name
/// (`HintGroupNames`). A "CCHINTS1" hint (written before the group section existed) has no
/// group section and is read as well, and so is a "CCHINTS2" hint (sections whole). Everything but the magic is encrypted and authenticated: keys never appear in
/// plaintext. A hint is used only if it authenticates and names the segment's id and exact
/// length. The group section only sizes the index: its counts are never trusted for anything
/// else (a wrong one costs at most a table grown or oversized within bounds).
struct HintFile {
  var segmentID: UInt32
  var segmentLength: UInt64
  var maxSequence: UInt64
  var entries: HintEntries

  init(segmentID: UInt32, segmentLength: UInt64, maxSequence: UInt64, entries: HintEntries) {
    self.segmentID = segmentID
    self.segmentLength = segmentLength
    self.maxSequence = maxSequence
    self.entries = entries
  }

  init(segmentID: UInt32, segmentLength: UInt64, maxSequence: UInt64, entries: [HintEntry]) {
    self.init(
      segmentID: segmentID, segmentLength: segmentLength, maxSequence: maxSequence, entries: HintEntries(entries))
  }

  /// Writes the hint beside its segment in `directory`, atomically. The directory is not
  /// synced: a hint lost in a crash only makes the next open scan the segment.
  func write(in directory: String, fileSystem: any FileSystem, cipher: RecordCipher) throws {
    try AtomicFile.write(
      encoded(cipher: cipher), to: "\(directory)/\(Segment.hintName(id: segmentID))", fileSystem: fileSystem,
      syncingDirectory: nil)
  }

  /// The sealed file: grouped ("CCHINTS2"; "CCHINTS3" when entries carry attachment sections)
  /// unless `grouped` is false, which writes the layout before the group section (for tests of
  /// hints written by earlier versions).
  ///
  /// - Parameters:
  ///   - section: the group section to write instead of the one the entries give (for tests of
  ///     hints whose counts lie).
  ///   - namingGroups: whether attachment sections name their groups by number ("CCHINTS3");
  ///     `false` writes them whole, as a "CCHINTS2" hint (for tests of hints written before).
  func encoded(cipher: RecordCipher, grouped: Bool = true, section: HintSizes? = nil, namingGroups: Bool = true)
    throws -> [UInt8]
  {
    let names =
      grouped && namingGroups && cipher.attachesKeys && entries.hasAttachments ? HintGroupNames(entries: entries) : nil
    var payload = ByteWriter(
      capacity: CaskFormat.hintGroupedHeaderLength + entries.count * CaskFormat.hintEntryFixedLength
        + entries.keyByteCount)
    payload.appendHintHead(
      cipher: cipher, segmentID: segmentID, segmentLength: segmentLength, maxSequence: maxSequence,
      count: entries.count)
    if grouped {
      var counter = GroupCounter()
      if section == nil {
        entries.forEachEntry { isDelete, _, _, key in
          if !isDelete { counter.add(key) }
        }
      }
      (section ?? counter.sizes).appendSection(to: &payload, tagLength: cipher.tagLength)
      names?.append(to: &payload)
    }
    entries.forEachEntryWithSection { isDelete, offset, length, key, attached in
      let type =
        isDelete
        ? CaskFormat.recordTypeDelete : attached.isEmpty ? CaskFormat.recordTypePut : CaskFormat.hintEntryTypeAttached
      payload.append(type)
      payload.append(UInt8(0))
      payload.append(UInt16(key.count))
      payload.append(offset)
      payload.append(length)
      payload.append(contentsOf: key)
      if let names, !attached.isEmpty {
        names.appendSection(attached, to: &payload)
      } else if !attached.isEmpty {
        payload.append(UInt32(attached.count))
        payload.append(contentsOf: attached)
      }
    }
    let message = try cipher.seal(Data(payload.bytes))
    let magic =
      names != nil ? CaskFormat.hintMagicNamed : grouped ? CaskFormat.hintMagicGrouped : CaskFormat.hintMagic
    return magic + Array(message)
  }

  /// Decrypts and parses a hint file.
  ///
  /// - Throws: `CaskError.corrupt` when it is damaged in any way; the caller then scans the
  ///   segment instead.
  static func decode(_ bytes: Data, cipher: RecordCipher, path: String) throws -> HintFile {
    let payload = try bytes.withUnsafeBytes { try HintPayload(file: $0, cipher: cipher, path: path) }
    var entries = HintEntries()
    try payload.forEachEntryWithSection { isDelete, offset, length, key, attached in
      entries.append(isDelete: isDelete, offset: offset, length: length, key: key, attached: attached)
    }
    return HintFile(
      segmentID: payload.segmentID, segmentLength: payload.segmentLength, maxSequence: payload.maxSequence,
      entries: entries)
  }
}

/// A decrypted hint whose entries are read in place, without a `String` or an entry value per
/// key: open indexes a segment straight from it.
struct HintPayload {
  var segmentID: UInt32
  var segmentLength: UInt64
  var maxSequence: UInt64
  /// Number of entries.
  var count: Int
  /// Whether the file is a grouped hint ("CCHINTS2" or "CCHINTS3").
  var isGrouped: Bool
  /// Put entries by group: as the group section lists them (each bounded by the entry count),
  /// or for a hint without one as counted from its entries.
  var sizes: HintSizes
  /// The decrypted payload, mapped when large (see `TransientBuffer`).
  private var plaintext: TransientBuffer
  private var plaintextLength: Int
  private var entriesStart: Int
  private var path: String
  /// A "CCHINTS3" hint's table of group names (where each lies in `plaintext`); `nil` for an
  /// earlier hint, whose sections spell their names.
  private var names: [Range<Int>]?
  /// A "CCHINTS3" hint's attachment sections as a record holds them (names spelled out), back
  /// to back in the order of their entries, and where each ends.
  private var sections: [UInt8] = []
  private var sectionEnds: [Int] = []

  /// Decrypts a hint file and checks its header and every entry (type, key length, UTF-8).
  ///
  /// - Throws: `CaskError.corrupt` when it is damaged in any way.
  init(file bytes: UnsafeRawBufferPointer, cipher: RecordCipher, path: String) throws {
    guard let layout = Self.layout(of: bytes) else {
      throw CaskError.corrupt(file: path, offset: 0, reason: "not a hint file")
    }
    let grouped = layout >= 2
    let magicLength = CaskFormat.hintMagic.count
    let message = UnsafeRawBufferPointer(rebasing: bytes[magicLength...])
    let plaintext = try TransientBuffer(count: message.count, purpose: path)
    let plaintextLength = try cipher.open(message, into: plaintext.bytes, file: path, offset: UInt64(magicLength))
    let damaged = CaskError.corrupt(file: path, offset: UInt64(magicLength), reason: "malformed hint payload")
    let header = try { () throws -> (UInt32, UInt64, UInt64, Int, HintSizes?, Int, [Range<Int>]?) in
      let buffer = UnsafeRawBufferPointer(rebasing: plaintext.bytes[0..<plaintextLength])
      var reader = ByteReader(buffer)
      // From version 3 on the payload is tagged as a hint's: no key or value message reads as one.
      if cipher.bindsRecords {
        guard reader.readUInt8() == CaskFormat.messageTagHint else { throw damaged }
      }
      guard let version = reader.readUInt16(), version == cipher.version, reader.readUInt16() != nil,
        let segmentID = reader.readUInt32(), let segmentLength = reader.readUInt64(),
        let maxSequence = reader.readUInt64(), let count = reader.readUInt32()
      else { throw damaged }
      var sizes: HintSizes?
      if grouped {
        // The section must be whole and end within the bytes open reads for sizing.
        guard let section = HintSizes.readSection(from: &reader, bound: Int(count), complete: true),
          buffer.count - reader.remaining <= CaskFormat.hintSizingLength
        else { throw damaged }
        sizes = section
      }
      var names: [Range<Int>]?
      if layout == 3 {
        // Only the layout whose records carry attached keys has sections to name groups in.
        guard cipher.attachesKeys, let table = HintGroupNames.read(from: &reader) else { throw damaged }
        names = table.map { name in
          let start = buffer.baseAddress!.distance(to: name.baseAddress!)
          return start..<start + name.count
        }
      }
      guard Int(count) <= reader.remaining / CaskFormat.hintEntryFixedLength else { throw damaged }
      return (segmentID, segmentLength, maxSequence, Int(count), sizes, buffer.count - reader.remaining, names)
    }()
    let listed: HintSizes?
    (segmentID, segmentLength, maxSequence, count, listed, entriesStart, names) = header
    isGrouped = grouped
    sizes = listed ?? HintSizes()
    self.plaintext = plaintext
    self.plaintextLength = plaintextLength
    self.path = path
    if let names {
      // Each section with its names spelled out, once, so that every walk hands out sections
      // as a record holds them.
      let table = names.map { UnsafeRawBufferPointer(rebasing: plaintext.bytes[$0]) }
      var expanded: [UInt8] = []
      var ends: [Int] = []
      try walkEntries { _, _, _, _, section in
        guard section.isEmpty || HintGroupNames.expand(section, names: table, into: &expanded) else { throw damaged }
        if !section.isEmpty { ends.append(expanded.count) }
      }
      sections = expanded
      sectionEnds = ends
    }
    // Check every entry now, so a damaged hint is refused before any of it is used; a hint
    // without a group section has its puts counted by group on the way.
    // An attachment section only in a version 5 hint (the layout whose records carry them),
    // and well formed for its entry's key.
    let attaches = cipher.attachesKeys
    if grouped {
      try forEachEntryWithSection { _, _, _, key, attached in
        guard HintPayload.isValidUTF8(key) else { throw damaged }
        guard attached.isEmpty || (attaches && AttachedKeys.isWellFormed(attached, owner: key)) else { throw damaged }
      }
    } else {
      var counter = GroupCounter()
      try forEachEntryWithSection { isDelete, _, _, key, attached in
        guard HintPayload.isValidUTF8(key) else { throw damaged }
        guard attached.isEmpty || (attaches && AttachedKeys.isWellFormed(attached, owner: key)) else { throw damaged }
        if !isDelete { counter.add(key) }
      }
      sizes = counter.sizes
    }
  }

  /// The same hint as a grouped one ("CCHINTS2"), sealed anew: this header, the group
  /// section of `sizes`, and the entries copied as they are. For a hint written before the
  /// group section, so that the next open sizes its tables up front.
  func regrouped(cipher: RecordCipher) throws -> [UInt8] {
    var payload = ByteWriter(capacity: plaintextLength + CaskFormat.hintSizingLength)
    payload.appendHintHead(
      cipher: cipher, segmentID: segmentID, segmentLength: segmentLength, maxSequence: maxSequence, count: count)
    sizes.appendSection(to: &payload, tagLength: cipher.tagLength)
    payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: plaintext.bytes[entriesStart..<plaintextLength]))
    return CaskFormat.hintMagicGrouped + Array(try cipher.seal(Data(payload.bytes)))
  }

  /// Whether `bytes` start with a grouped hint's magic (`true`) or an earlier one's
  /// (`false`); `nil` for neither, or nothing after it.
  static func magic(of bytes: UnsafeRawBufferPointer) -> Bool? {
    layout(of: bytes).map { $0 >= 2 }
  }

  /// The hint layout `bytes` start with: 1 ("CCHINTS1"), 2 ("CCHINTS2") or 3 ("CCHINTS3");
  /// `nil` for none, or nothing after it.
  static func layout(of bytes: UnsafeRawBufferPointer) -> Int? {
    let magicLength = CaskFormat.hintMagic.count
    guard bytes.count > magicLength else { return nil }
    let head = UnsafeRawBufferPointer(rebasing: bytes[0..<magicLength])
    if head.elementsEqual(CaskFormat.hintMagicNamed) { return 3 }
    if head.elementsEqual(CaskFormat.hintMagicGrouped) { return 2 }
    if head.elementsEqual(CaskFormat.hintMagic) { return 1 }
    return nil
  }

  /// Calls `body` with each entry in order: whether it is a delete, the record's offset and
  /// length, and the key's UTF-8 bytes (valid only during the call).
  ///
  /// - Throws: `CaskError.corrupt` for a malformed entry, and what `body` throws.
  func forEachEntry(
    _ body: (_ isDelete: Bool, _ offset: UInt32, _ length: UInt32, _ key: UnsafeRawBufferPointer) throws -> Void
  ) throws {
    try forEachEntryWithSection { isDelete, offset, length, key, _ in try body(isDelete, offset, length, key) }
  }

  /// `forEachEntry`, with each entry's attachment section as a record holds it (empty for
  /// none; checked by `init`).
  func forEachEntryWithSection(
    _ body: (
      _ isDelete: Bool, _ offset: UInt32, _ length: UInt32, _ key: UnsafeRawBufferPointer,
      _ attached: UnsafeRawBufferPointer
    ) throws -> Void
  ) throws {
    guard names != nil else { return try walkEntries(body) }
    try sections.withUnsafeBytes { expanded in
      var next = 0
      try walkEntries { isDelete, offset, length, key, section in
        var attached = section
        if !section.isEmpty {
          let start = next == 0 ? 0 : sectionEnds[next - 1]
          attached = UnsafeRawBufferPointer(rebasing: expanded[start..<sectionEnds[next]])
          next += 1
        }
        try body(isDelete, offset, length, key, attached)
      }
    }
  }

  /// The entries as the payload holds them: a "CCHINTS3" hint's sections with their groups
  /// named by number.
  private func walkEntries(
    _ body: (
      _ isDelete: Bool, _ offset: UInt32, _ length: UInt32, _ key: UnsafeRawBufferPointer,
      _ attached: UnsafeRawBufferPointer
    ) throws -> Void
  ) throws {
    let damaged = CaskError.corrupt(
      file: path, offset: UInt64(CaskFormat.hintMagic.count), reason: "malformed hint payload")
    do {
      var reader = ByteReader(UnsafeRawBufferPointer(rebasing: plaintext.bytes[entriesStart..<plaintextLength]))
      for _ in 0..<count {
        guard let type = reader.readUInt8(), reader.readUInt8() != nil, let keyLength = reader.readUInt16(),
          let offset = reader.readUInt32(), let length = reader.readUInt32(), keyLength > 0,
          type == CaskFormat.recordTypePut || type == CaskFormat.recordTypeDelete
            || type == CaskFormat.hintEntryTypeAttached,
          let key = reader.readBytes(Int(keyLength))
        else { throw damaged }
        var attached = UnsafeRawBufferPointer(start: nil, count: 0)
        if type == CaskFormat.hintEntryTypeAttached {
          guard let sectionLength = reader.readUInt32(), sectionLength > 0,
            let section = reader.readBytes(Int(sectionLength))
          else { throw damaged }
          attached = section
        }
        try body(type == CaskFormat.recordTypeDelete, offset, length, key, attached)
      }
      guard reader.remaining == 0 else { throw damaged }
    }
  }

  /// One entry of a hint, read in place.
  struct EntryView {
    var isDelete: Bool
    var offset: UInt32
    var length: UInt32
    /// The key's UTF-8 bytes, valid during the `forEachBatch` call that gave it.
    var key: UnsafeRawBufferPointer
    /// The attachment section of a put whose record carries attached keys (empty for none),
    /// valid as long as `key`.
    var attached: UnsafeRawBufferPointer
  }

  /// Calls `body` with the entries in order, up to `size` at a time, so that the caller can
  /// start fetching what a whole batch needs before it handles the first entry.
  ///
  /// - Throws: `CaskError.corrupt` for a malformed entry (after the batches before it), and
  ///   what `body` throws.
  func forEachBatch(of size: Int, _ body: (UnsafeBufferPointer<EntryView>) throws -> Void) throws {
    try withUnsafeTemporaryAllocation(of: EntryView.self, capacity: size) { batch in
      var filled = 0
      try forEachEntryWithSection { isDelete, offset, length, key, attached in
        // The key points into `plaintext`, which outlives this whole call.
        batch.initializeElement(
          at: filled, to: EntryView(isDelete: isDelete, offset: offset, length: length, key: key, attached: attached))
        filled += 1
        if filled == size {
          defer { filled = 0 }
          try body(UnsafeBufferPointer(rebasing: batch[0..<filled]))
        }
      }
      if filled > 0 { try body(UnsafeBufferPointer(rebasing: batch[0..<filled])) }
    }
  }

  /// Whether `bytes` are valid UTF-8 (ASCII checked eight bytes at a time first).
  static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var index = 0
    var high: UInt64 = 0
    while index + 8 <= bytes.count {
      high |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
      index += 8
    }
    while index < bytes.count {
      high |= UInt64(bytes[index])
      index += 1
    }
    if high & 0x8080_8080_8080_8080 == 0 { return true }
    return String(validating: bytes, as: UTF8.self) != nil
  }
}

extension ByteWriter {
  /// A hint payload's head (Docs/FORMAT.md, section 6): the tag (version 3), version, two
  /// reserved bytes, segment id, segment length, max sequence and entry count.
  mutating func appendHintHead(
    cipher: RecordCipher, segmentID: UInt32, segmentLength: UInt64, maxSequence: UInt64, count: Int
  ) {
    if cipher.bindsRecords { append(CaskFormat.messageTagHint) }
    append(cipher.version)
    append(UInt16(0))
    append(segmentID)
    append(segmentLength)
    append(maxSequence)
    append(UInt32(count))
  }
}

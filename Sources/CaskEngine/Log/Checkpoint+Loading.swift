import Foundation
import RNCryptorCodec

extension Checkpoint {
  /// How many keys of a loaded table are hashed again to check their meta word.
  static let hashCheckInterval = 16

  /// Reads, checks and decrypts every page, in the order the root implies, into the key
  /// directory and the covered segment's tombstones. A page is used only if its message's
  /// digest is the one the root lists for it, it authenticates, and its number, kind, table
  /// and size are the expected ones; a table only if its image is coherent
  /// (`KeyTable.isCoherent`).
  ///
  /// - Throws: `Rejection` at the first page or table that is not so; nothing is kept.
  /// - Complexity: O(bytes of the file): one decryption of each page and a pass over each table.
  func load(cipher: RecordCipher, read: @escaping (UInt64, Int) -> [UInt8]?) throws(Rejection) -> (
    KeyDirectory, HintEntries
  ) {
    let lengths = Dictionary(segments.map { ($0.id, $0.length) }, uniquingKeysWith: { first, _ in first })
    var reader = PageReader(checkpoint: self, cipher: cipher, read: read)
    var named: [(name: IndexKey, table: KeyTable)] = []
    var ungrouped: KeyTable?
    for (number, entry) in tables.enumerated() {
      guard entry.name.firstIndex(of: CaskFormat.keyGroupSeparator) == nil,
        entry.name.withUnsafeBytes({ HintPayload.isValidUTF8($0) })
      else { throw Rejection(reason: "a group name is malformed") }
      var table = KeyTable(image: Int(entry.capacity), hashKey: hashKey, count: Int(entry.count), arena: KeyArena())
      var first = 0
      while first < Int(entry.capacity) {
        let slots = min(Int(entry.capacity) - first, CaskFormat.checkpointSlotsPerPage)
        let contents = try reader.next(kind: CaskFormat.checkpointPageSlots, table: number, count: slots)
        contents.withUnsafeBytes { table.fillSlots(from: first, with: $0) }
        first += slots
      }
      var chunks: [[UInt8]] = []
      for length in entry.chunkLengths {
        chunks.append(Array(try reader.next(kind: CaskFormat.checkpointPageChunk, table: number, count: Int(length))))
      }
      table.arena = KeyArena(
        chunks: chunks, used: Int(entry.arenaUsed), live: Int(clamping: entry.arenaLive),
        dead: Int(clamping: entry.arenaDead))
      guard table.isCoherent(segmentLengths: lengths, sampleEvery: Self.hashCheckInterval),
        Self.keys(of: table, belongTo: number == 0 ? nil : entry.name)
      else { throw Rejection(reason: "table \(number) is not coherent") }
      if number == 0 {
        ungrouped = table
      } else {
        named.append((IndexKey(String(decoding: entry.name, as: UTF8.self)), table))
      }
    }
    var tombstones = HintEntries()
    while reader.hasMore {
      let contents = try reader.next(kind: CaskFormat.checkpointPageTombstones, table: 0, count: nil)
      guard Self.readTombstones(contents, into: &tombstones, segmentLength: coveredOffset) else {
        throw Rejection(reason: "a tombstone page is malformed")
      }
    }
    guard let ungrouped, tombstones.count == Int(tombstoneCount) else {
      throw Rejection(reason: "the pages do not hold what the root counts")
    }
    return (KeyDirectory(hashKey: hashKey, ungrouped: ungrouped, groups: named), tombstones)
  }

  /// Whether every key of `table` is of the group the table is for: in a group's table
  /// (`group` its name) the bytes before the key's first U+0000 are the name, in the table of
  /// keys without a group (`nil`) a key has no U+0000. Prevents: a key loaded into another
  /// group's table, which `count` and the group's counts then miscounted and lookups never
  /// found (the sampled hash check passes over most keys).
  ///
  /// - Complexity: O(capacity + bytes of the keys).
  private static func keys(of table: KeyTable, belongTo group: [UInt8]?) -> Bool {
    var belong = true
    table.forEachEntryBytes { key, _ in
      guard belong else { return }
      let separator = key.firstIndex(of: CaskFormat.keyGroupSeparator)
      if let group {
        belong = separator == group.count && key.prefix(group.count).elementsEqual(group)
      } else {
        belong = separator == nil
      }
    }
    return belong
  }

  /// Parses a tombstone page's entries (hint entries, deletes only, inside the covered
  /// segment).
  private static func readTombstones(_ contents: Data, into tombstones: inout HintEntries, segmentLength: UInt64)
    -> Bool
  {
    contents.withUnsafeBytes { buffer in
      var reader = ByteReader(buffer)
      while reader.remaining > 0 {
        guard reader.readUInt8() == CaskFormat.recordTypeDelete, reader.readUInt8() == 0,
          let keyLength = reader.readUInt16(), let offset = reader.readUInt32(), let length = reader.readUInt32(),
          keyLength > 0, let key = reader.readBytes(Int(keyLength)), HintPayload.isValidUTF8(key),
          UInt64(offset) >= UInt64(CaskFormat.segmentHeaderLength), UInt64(offset) + UInt64(length) <= segmentLength
        else { return false }
        tombstones.append(isDelete: true, offset: offset, length: length, key: key)
      }
      return true
    }
  }
}

/// Reads a checkpoint's pages one after another, each checked against the root.
private struct PageReader {
  let checkpoint: Checkpoint
  let cipher: RecordCipher
  let read: (UInt64, Int) -> [UInt8]?
  var number = 0
  var position: UInt64

  init(checkpoint: Checkpoint, cipher: RecordCipher, read: @escaping (UInt64, Int) -> [UInt8]?) {
    self.checkpoint = checkpoint
    self.cipher = cipher
    self.read = read
    position = UInt64(CaskFormat.checkpointHeadLength + checkpoint.rootMessageLength)
  }

  var hasMore: Bool { number < checkpoint.pages.count }

  /// The contents of the next page, which must be of `kind` and `table` and hold `count`
  /// slots, bytes or (for `nil`) any number of tombstones.
  mutating func next(kind: UInt8, table: Int, count: Int?) throws(Checkpoint.Rejection) -> Data {
    let rejection = Checkpoint.Rejection(reason: "page \(number) is missing, damaged or not the root's")
    guard hasMore else { throw rejection }
    let reference = checkpoint.pages[number]
    guard let message = read(position, Int(reference.length)),
      constantTimeEqual(Array(message.suffix(RNCryptor.Format.hmacLength)), reference.digest),
      let plaintext = try? cipher.open(Data(message), file: CaskFormat.checkpointFileName, offset: position)
    else { throw rejection }
    let head = CaskFormat.checkpointPageHeadLength
    let matches = plaintext.withUnsafeBytes { buffer -> Bool in
      guard buffer.count >= head else { return false }
      var header = ByteReader(buffer)
      guard header.readUInt8() == CaskFormat.messageTagCheckpointPage, header.readUInt8() == kind,
        header.readUInt16() == 0, header.readUInt32() == UInt32(number), header.readUInt32() == UInt32(table),
        let stated = header.readUInt32()
      else { return false }
      if let count { return Int(stated) == count && buffer.count - head == Self.contentLength(kind, count) }
      return stated > 0
    }
    guard matches else { throw Checkpoint.Rejection(reason: "page \(number) is malformed") }
    number += 1
    position += UInt64(reference.length)
    return plaintext.subdata(in: plaintext.startIndex + head..<plaintext.endIndex)
  }

  private static func contentLength(_ kind: UInt8, _ count: Int) -> Int {
    kind == CaskFormat.checkpointPageSlots ? count * KeyTable.slotLength : count
  }
}

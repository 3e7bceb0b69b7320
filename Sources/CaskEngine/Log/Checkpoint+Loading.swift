import Foundation
import RNCryptorCodec

extension Checkpoint {
  /// How many keys of a loaded table are hashed again to check their meta word.
  static let hashCheckInterval = 16

  /// Reads, checks and decrypts every page, in the order the root implies, into the key
  /// directory and the covered segment's tombstones: `load(from:)`, then every page of
  /// every table at once (what a reader that only checks a file, the fuzz target, wants).
  ///
  /// - Throws: `Rejection` at the first page or table that is not so; nothing is kept.
  /// - Complexity: O(bytes of the file): one decryption of each page and a pass over each table.
  func load(cipher: RecordCipher, read: @escaping (UInt64, Int) -> [UInt8]?) throws(Rejection) -> (
    KeyDirectory, HintEntries
  ) {
    let pages = CheckpointPages(root: self, cipher: cipher, path: CaskFormat.checkpointFileName, read: read)
    let (directory, tombstones) = try load(from: pages)
    guard directory.loadAllPages() else {
      throw Rejection(reason: pages.damage.map { "\($0)" } ?? "a page does not check out")
    }
    return (directory, tombstones)
  }

  /// The key directory whose tables load their slot pages from `pages` when first touched
  /// (`KeyTable+Lazy.swift`), and the covered segment's tombstones. Read and checked here:
  /// each table's chunks of long keys and the tombstone pages (the covered segment's hint
  /// needs them), and each table's count against its capacity (at most 80% full, so that a
  /// probe ends at an empty slot). A slot page's own checks, and a table's count against the
  /// used slots of its pages, wait for its pages' loads.
  ///
  /// - Throws: `Rejection` at the first page or table that is not so.
  /// - Complexity: O(tables + bytes of the chunks and tombstone pages); no slot page is read.
  func load(from pages: CheckpointPages) throws(Rejection) -> (KeyDirectory, HintEntries) {
    var named: [(name: IndexKey, table: KeyTable)] = []
    var ungrouped: KeyTable?
    var number = 0
    for (position, entry) in tables.enumerated() {
      guard entry.name.firstIndex(of: CaskFormat.keyGroupSeparator) == nil,
        entry.name.withUnsafeBytes({ HintPayload.isValidUTF8($0) })
      else { throw Rejection(reason: "a group name is malformed") }
      let capacity = Int(entry.capacity)
      let count = Int(entry.count)
      guard count * 5 <= capacity * KeyTable.maximumLoadFifths, count < capacity || capacity == 0 else {
        throw Rejection(reason: "table \(position) is fuller than a table grows")
      }
      let firstPage = number
      number += (capacity + CaskFormat.checkpointSlotsPerPage - 1) / CaskFormat.checkpointSlotsPerPage
      var chunks: [[UInt8]] = []
      for length in entry.chunkLengths {
        let contents = try pages.contents(
          of: number, kind: CaskFormat.checkpointPageChunk, table: position, count: Int(length))
        chunks.append(Array(contents))
        number += 1
      }
      let arena = KeyArena(
        chunks: chunks, used: Int(entry.arenaUsed), live: Int(clamping: entry.arenaLive),
        dead: Int(clamping: entry.arenaDead))
      let source = KeyTable.PageSource(
        pages: pages, table: position, firstPage: firstPage, expectedCount: count,
        chunkLengths: entry.chunkLengths.map { Int($0) }, group: position == 0 ? nil : entry.name, hashKey: hashKey)
      let table = KeyTable(capacity: capacity, count: count, arena: arena, source: source)
      if position == 0 {
        ungrouped = table
      } else {
        named.append((IndexKey(String(decoding: entry.name, as: UTF8.self)), table))
      }
    }
    var tombstones = HintEntries()
    while number < self.pages.count {
      let contents = try pages.contents(of: number, kind: CaskFormat.checkpointPageTombstones, table: 0, count: nil)
      guard Self.readTombstones(contents, into: &tombstones, segmentLength: coveredOffset) else {
        throw Rejection(reason: "a tombstone page is malformed")
      }
      number += 1
    }
    guard let ungrouped, tombstones.count == Int(tombstoneCount) else {
      throw Rejection(reason: "the pages do not hold what the root counts")
    }
    var directory = KeyDirectory(hashKey: hashKey, ungrouped: ungrouped, groups: named, pages: pages)
    // The set of records carrying attached keys is known, and empty, without a walk.
    if carriesNoAttachedKeys { directory.attachedOwnersKnown = true }
    return (directory, tombstones)
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

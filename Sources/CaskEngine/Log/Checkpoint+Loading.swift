import Foundation
import RNCryptorCodec

extension Checkpoint {
  /// One long key in this many is hashed again to check its meta word when a walk hands it
  /// out (its bytes are in a chunk, which a slot page's own checks do not read); every key
  /// held in a slot is hashed again when its page loads.
  static let hashCheckInterval = 16

  /// The key directory whose tables load their slot pages and their chunks of long keys from
  /// `pages` when first needed (`KeyTable+Lazy.swift`, `KeyArena+Lazy.swift`; a sorted
  /// group's chunks from its sorted pages, through `cache`), and the covered segment's
  /// tombstones. Read and checked here: the tombstone pages (the covered
  /// segment's hint needs them), and each table's count against its capacity (at most 80%
  /// full, so that a probe ends at an empty slot). A page's own checks, and a table's count
  /// against the used slots of its pages, wait for its loads.
  ///
  /// - Throws: `Rejection` at the first page or table that is not so.
  /// - Complexity: O(tables + bytes of the tombstone pages); no slot or chunk page is read.
  func load(from pages: CheckpointPages, cache: SortedPageCache) throws(Rejection) -> (KeyDirectory, HintEntries) {
    let bases = sortedBasesByTable(pages: pages, cache: cache)
    var named: [(name: IndexKey, table: KeyTable)] = []
    var ungrouped: KeyTable?
    var number = 0
    // Indices rather than `enumerated()`: open runs this once per process too, and an
    // enumerated pair of a new element type costs its generic metadata at first use.
    for position in tables.indices {
      let entry = tables[position]
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
      let group = position == 0 ? nil : entry.name
      var chunks = KeyArena.ChunkSource(
        pages: pages, table: position, firstPage: number, group: group, hashKey: hashKey)
      if let base = bases[position], let sorted = sortedGroups.first(where: { Int($0.table) == position }) {
        chunks.sorted = KeyArena.SortedChunks(
          base: base, name: entry.name, starts: sorted.chunkStarts.map { Int($0) })
      } else {
        number += entry.chunkLengths.count
      }
      let arena = KeyArena(
        reserving: entry.chunkLengths.map { Int($0) }, used: Int(entry.arenaUsed),
        live: Int(clamping: entry.arenaLive), dead: Int(clamping: entry.arenaDead), source: chunks)
      let source = KeyTable.PageSource(
        pages: pages, table: position, firstPage: firstPage, expectedCount: count,
        chunkLengths: entry.chunkLengths.map { Int($0) }, group: group, hashKey: hashKey)
      let table = KeyTable(capacity: capacity, count: count, arena: arena, source: source)
      if position == 0 {
        ungrouped = table
      } else {
        named.append((IndexKey(String(decoding: entry.name, as: UTF8.self)), table))
      }
    }
    var tombstones = HintEntries()
    number += sortedPageCount
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

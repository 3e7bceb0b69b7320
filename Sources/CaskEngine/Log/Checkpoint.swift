import Foundation
import RNCryptorCodec

/// The `CHECKPOINT` file (Docs/FORMAT.md, section 18): the key directory's tables as they were
/// at one place in the log, slot for slot, so that open copies them back instead of hashing and
/// placing every key again, and replays only the records written after that place.
///
/// ```
/// 0 magic "CCCHKPT1"(8)   8 root length R(4)   12 root: key message under the data key
/// 12 + R  pages, back to back: key messages under the data key, each listed in the root
/// ```
/// The root binds the store (its identity and key epoch), the manifest generation and the
/// place it covers (segment, offset, last sequence); it lists every segment with its length
/// and usage, every table (its group, capacity, count and long-key chunks), each page's
/// length, and a random nonce drawn for this file. Pages follow in the order the root implies
/// (each table's slots, then its long-key chunks; the covered segment's tombstones last), each
/// naming its number, kind, table and the file's nonce under its own HMAC: a page cannot be
/// swapped, cut, reordered or taken from another checkpoint without its head disagreeing with
/// the root. (The root does not list each page's digest: at a million keys that was 295 KB to
/// authenticate and decrypt at every open, against 33 KB of lengths.)
struct Checkpoint: Sendable, Equatable {
  /// A segment the checkpoint describes: exactly this long (the covered segment: at least),
  /// with these usage figures.
  struct SegmentEntry: Sendable, Equatable {
    var id: UInt32
    var order: SegmentOrder
    var epoch: UInt32
    var length: UInt64
    var totalBytes: UInt64
    var deadBytes: UInt64
  }

  /// A table of the directory: the keys outside any group (the first, with an empty name)
  /// or one group's.
  struct TableEntry: Sendable, Equatable {
    var name: [UInt8]
    var capacity: UInt64
    var count: UInt64
    var arenaLive: UInt64
    var arenaDead: UInt64
    /// Bytes used in the last chunk.
    var arenaUsed: UInt32
    var chunkLengths: [UInt32]
  }

  /// One page as the root lists it: the length of its message (its place in the file is the
  /// sum of the lengths before it).
  struct PageReference: Sendable, Equatable {
    var length: UInt32
  }

  /// The random bytes that bind a file's pages to its root (`CaskFormat.checkpointNonceLength`),
  /// held as two words: every page's head carries them, and a page read is this file's only if
  /// they are the root's. Prevents: a page of another checkpoint of the same store, sealed
  /// under the same key and at the same place, being taken for this file's.
  struct Nonce: Sendable, Equatable {
    var first: UInt64
    var second: UInt64

    /// Fresh random bytes, for a file about to be written.
    static func random() throws -> Nonce {
      let bytes = try RNCryptor.randomSalt(count: CaskFormat.checkpointNonceLength)
      return bytes.withUnsafeBytes {
        Nonce(first: loadLittleEndian($0, at: 0, as: UInt64.self), second: loadLittleEndian($0, at: 8, as: UInt64.self))
      }
    }
  }

  var recordVersion: UInt16
  var epoch: UInt32
  /// The store's identity (`CaskFormat.checkpointIdentityLength` bytes).
  var identity: [UInt8]
  var generation: UInt64
  /// The last segment when the checkpoint was taken, and how far it reached: open replays
  /// what lies after `coveredOffset` in it.
  var coveredSegment: UInt32
  var coveredOffset: UInt64
  var lastSequence: UInt64
  var keyCount: UInt64
  var hashKey: KeyHashKey
  var tombstoneCount: UInt32
  var segments: [SegmentEntry]
  var tables: [TableEntry]
  var pages: [PageReference] = []
  /// This file's nonce, which each of its pages repeats.
  var nonce = Nonce(first: 0, second: 0)
  /// The sorted groups (`Checkpoint+Sorted.swift`): each reserved group's keys in byte order.
  var sortedGroups: [SortedGroupEntry] = []
  /// The length of the sealed root, as read (pages start after it).
  var rootMessageLength = 0
  /// No record of the covered log carries attached keys (`checkpointFlagNoAttachedKeys`).
  /// Prevents: after an open from a checkpoint of a store without attached keys, every put
  /// and delete of an existing key reading and decrypting the record it replaces, to learn
  /// that it carried none (deletes at a tenth of their speed).
  var carriesNoAttachedKeys = false

  /// The bytes of the root's plaintext.
  func encodedRoot() -> [UInt8] {
    var root = ByteWriter(capacity: CaskFormat.checkpointRootFixedLength)
    root.append(CaskFormat.messageTagCheckpointRoot)
    root.append(carriesNoAttachedKeys ? CaskFormat.checkpointFlagNoAttachedKeys : 0)
    root.append(CaskFormat.checkpointLayoutVersion)
    root.append(recordVersion)
    root.append(UInt16(0))
    root.append(epoch)
    root.append(contentsOf: identity)
    root.append(generation)
    root.append(coveredSegment)
    root.append(coveredOffset)
    root.append(lastSequence)
    root.append(keyCount)
    root.append(hashKey.k0)
    root.append(hashKey.k1)
    root.append(tombstoneCount)
    root.append(UInt32(segments.count))
    root.append(UInt32(tables.count))
    root.append(UInt32(pages.count))
    root.append(nonce.first)
    root.append(nonce.second)
    for segment in segments {
      root.append(segment.id)
      root.append(segment.order.base)
      root.append(segment.order.sub)
      root.append(segment.epoch)
      root.append(segment.length)
      root.append(segment.totalBytes)
      root.append(segment.deadBytes)
    }
    for table in tables {
      root.append(table.capacity)
      root.append(table.count)
      root.append(table.arenaLive)
      root.append(table.arenaDead)
      root.append(table.arenaUsed)
      root.append(UInt32(table.chunkLengths.count))
      root.append(UInt16(table.name.count))
      root.append(contentsOf: table.name)
      for length in table.chunkLengths { root.append(length) }
    }
    // Before the page references, which end the root (the fuzz target's assembler sets them).
    appendSortedGroups(to: &root)
    for page in pages { root.append(page.length) }
    return root.bytes
  }

  /// The identity a checkpoint of the store with this header binds: the HMAC that ends its
  /// wrapped-key message (every RNCryptor message ends with one), new at every creation and
  /// password change.
  static func identity(of header: StoreHeader) -> [UInt8]? {
    guard header.wrappedKey.count >= CaskFormat.checkpointIdentityLength else { return nil }
    return Array(header.wrappedKey.suffix(CaskFormat.checkpointIdentityLength))
  }
}

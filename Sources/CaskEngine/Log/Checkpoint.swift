import Foundation
import RNCryptorCodec

/// The `CHECKPOINT` file (Docs/FORMAT.md, section 18): the key directory as it was at one
/// place in the log, so that open loads it and replays only the records written after it.
///
/// ```
/// 0 magic "CCCHKPT1"(8)   8 root length R(4)   12 root: key message under the data key
/// 12 + R  pages, back to back: key messages under the data key, each listed in the root
/// ```
/// The root binds the store (its identity and key epoch), the manifest generation and the
/// place it covers (segment, offset, last sequence), lists every segment it describes with
/// its length and usage, the size of each table of the index, and each page's length and
/// digest (the HMAC that ends the page's message). A page holds the entries of one segment,
/// laid out as a hint's, behind its page number and segment: pages cannot be swapped, cut,
/// reordered or taken from another checkpoint without the root's digests disagreeing.
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

  /// One page as the root lists it.
  struct PageReference: Sendable, Equatable {
    var length: UInt32
    var segment: UInt32
    var entries: UInt32
    var digest: [UInt8]
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
  var segments: [SegmentEntry]
  /// The keys of each table of the index.
  var sizes: HintSizes
  var pages: [PageReference] = []
  /// The length of the sealed root, as read (pages start after it).
  var rootMessageLength = 0

  /// The bytes of the root's plaintext.
  func encodedRoot() -> [UInt8] {
    var root = ByteWriter(capacity: CaskFormat.checkpointRootFixedLength)
    root.append(CaskFormat.messageTagCheckpointRoot)
    root.append(UInt8(0))
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
    root.append(UInt64(sizes.ungrouped))
    root.append(UInt32(segments.count))
    root.append(UInt32(sizes.groups.count))
    root.append(UInt32(pages.count))
    for segment in segments {
      root.append(segment.id)
      root.append(segment.order.base)
      root.append(segment.order.sub)
      root.append(segment.epoch)
      root.append(segment.length)
      root.append(segment.totalBytes)
      root.append(segment.deadBytes)
    }
    for group in sizes.groups {
      root.append(UInt64(group.puts))
      root.append(UInt16(group.name.count))
      root.append(contentsOf: group.name)
    }
    for page in pages {
      root.append(page.length)
      root.append(page.segment)
      root.append(page.entries)
      root.append(contentsOf: page.digest)
    }
    return root.bytes
  }

  /// The whole file: the root (its page list filled in here) and the pages made from
  /// `entries`, one segment's entries after another, each page closed at
  /// `CaskFormat.checkpointPageTarget` bytes.
  ///
  /// - Complexity: O(n) in the entries, one encryption of each page.
  func encoded(entries: [(segment: UInt32, entries: HintEntries)], cipher: RecordCipher) throws -> [UInt8] {
    var root = self
    root.pages = []
    var body: [UInt8] = []
    for (segment, list) in entries where list.count > 0 {
      var page = ByteWriter(capacity: CaskFormat.checkpointPageTarget + 1024)
      var count: UInt32 = 0
      func close() throws {
        guard count > 0 else { return }
        var head = ByteWriter(capacity: CaskFormat.checkpointPageHeadLength)
        head.append(CaskFormat.messageTagCheckpointPage)
        head.append(contentsOf: [0, 0, 0] as [UInt8])
        head.append(UInt32(root.pages.count))
        head.append(segment)
        head.append(count)
        let message = Array(try cipher.seal(Data(head.bytes + page.bytes)))
        root.pages.append(
          PageReference(
            length: UInt32(message.count), segment: segment, entries: count,
            digest: Array(message.suffix(RNCryptor.Format.hmacLength))))
        body.append(contentsOf: message)
        page = ByteWriter(capacity: CaskFormat.checkpointPageTarget + 1024)
        count = 0
      }
      try list.forEachEntry { isDelete, offset, length, key in
        if page.bytes.count + CaskFormat.hintEntryFixedLength + key.count > CaskFormat.checkpointPageTarget {
          try close()
        }
        page.append(isDelete ? CaskFormat.recordTypeDelete : CaskFormat.recordTypePut)
        page.append(UInt8(0))
        page.append(UInt16(key.count))
        page.append(offset)
        page.append(length)
        page.append(contentsOf: key)
        count += 1
      }
      try close()
    }
    let sealedRoot = Array(try cipher.seal(Data(root.encodedRoot())))
    var file = ByteWriter(capacity: CaskFormat.checkpointHeadLength + sealedRoot.count + body.count)
    file.append(contentsOf: CaskFormat.checkpointMagic)
    file.append(UInt32(sealedRoot.count))
    file.append(contentsOf: sealedRoot)
    file.append(contentsOf: body)
    return file.bytes
  }

  /// The identity a checkpoint of the store with this header binds: the HMAC that ends its
  /// wrapped-key message (every RNCryptor message ends with one), new at every creation and
  /// password change.
  static func identity(of header: StoreHeader) -> [UInt8]? {
    guard header.wrappedKey.count >= CaskFormat.checkpointIdentityLength else { return nil }
    return Array(header.wrappedKey.suffix(CaskFormat.checkpointIdentityLength))
  }
}

import Foundation
import RNCryptorCodec

/// The link a version 5 segment carries after its 32-byte header (Docs/FORMAT.md, section
/// 5.1): the identity of the store that wrote it and the segment that was the newest ordinary
/// one when it was started, named by id, order, final length and last 32 bytes, under a MAC
/// that also covers the 32 bytes before it (magic, version, id, order, key epoch). Open and
/// `verify` follow these links from the newest segment the manifest lists through every
/// segment started after it (`Manifest.chainDisagreements`), so a segment removed from the
/// middle, two segments' order fields swapped, or a segment of another store or copy is
/// found even under an older manifest.
///
/// ```
/// 32 store identity(16)  48 previous id(4)  52 previous order base(4)  56 previous order sub(4)
/// 60 flags(4)  64 previous length(8)  72 previous tail(32)  104 MAC(32)  136 first record
/// ```
/// The MAC is HMAC-SHA256 of bytes 0..<104 under the HMAC half of the data key of the key
/// epoch the header names. A compaction output (order sub above 0) has no predecessor (flags 0,
/// the fields zero): the chain is the writer's sequence of ordinary segments.
struct SegmentLink: Equatable, Sendable {
  /// The segment a new one follows, as it was when that one was started.
  struct Predecessor: Equatable, Sendable {
    var id: UInt32
    var order: SegmentOrder
    /// The predecessor's length when its successor was started: sealed, it keeps it.
    var length: UInt64
    /// Its last `CaskFormat.segmentTailLength` bytes at that length: the last record's MAC,
    /// or the end of its own link when it holds no record.
    var tail: [UInt8]
  }

  var identity: [UInt8]
  var previous: Predecessor?

  /// The link's bytes, MAC included, for the segment whose first 32 header bytes are `header`.
  ///
  /// - Throws: `CaskError.crypto` when libcrypto fails.
  func encoded(after header: [UInt8], keys: RNCryptor.Keys) throws -> [UInt8] {
    var writer = ByteWriter(capacity: CaskFormat.segmentHeaderLength + CaskFormat.segmentLinkLength)
    writer.append(contentsOf: header)
    writer.append(contentsOf: identity)
    writer.append(previous?.id ?? 0)
    writer.append(previous?.order.base ?? 0)
    writer.append(previous?.order.sub ?? 0)
    writer.append(previous == nil ? 0 : CaskFormat.segmentLinkFlagPrevious)
    writer.append(previous?.length ?? 0)
    writer.append(contentsOf: previous?.tail ?? [UInt8](repeating: 0, count: CaskFormat.segmentTailLength))
    let mac = try StoreHeader.authenticator(of: writer.bytes, keys: keys)
    return Array(writer.bytes.dropFirst(CaskFormat.segmentHeaderLength)) + mac
  }

  /// Parses and authenticates the link of a segment whose header (`bytes`, at least
  /// `CaskFormat.segmentHeaderLength + CaskFormat.segmentLinkLength` long) says version 5.
  ///
  /// - Returns: `nil` when it is too short, malformed, or does not authenticate under `keys`.
  static func decode(_ bytes: Data, keys: RNCryptor.Keys) -> SegmentLink? {
    let total = CaskFormat.segmentHeaderLength + CaskFormat.segmentLinkLength
    guard bytes.count >= total else { return nil }
    let covered = [UInt8](bytes.prefix(total - CaskFormat.authenticatorLength))
    guard let expected = try? StoreHeader.authenticator(of: covered, keys: keys),
      constantTimeEqual(expected, [UInt8](bytes[(total - CaskFormat.authenticatorLength)..<total]))
    else { return nil }
    return covered.withUnsafeBytes { buffer -> SegmentLink? in
      var reader = ByteReader(buffer, offset: CaskFormat.segmentHeaderLength)
      guard let identity = reader.readBytes(CaskFormat.storeIdentityLength), let id = reader.readUInt32(),
        let base = reader.readUInt32(), let sub = reader.readUInt32(), let flags = reader.readUInt32(),
        flags & ~CaskFormat.segmentLinkFlagPrevious == 0, let length = reader.readUInt64(),
        let tail = reader.readBytes(CaskFormat.segmentTailLength)
      else { return nil }
      var link = SegmentLink(identity: Array(identity))
      if flags != 0 {
        link.previous = Predecessor(
          id: id, order: SegmentOrder(base: base, sub: sub), length: length, tail: Array(tail))
      }
      return link
    }
  }

  /// What `previous` says of a segment as it is on disk now: its id, order, length and last
  /// bytes.
  ///
  /// - Throws: `CaskError.io` when the file cannot be read.
  static func predecessor(_ segment: Segment) throws -> Predecessor {
    let length = min(try segment.file.size(), CaskFormat.maximumSegmentLength)
    return Predecessor(
      id: segment.id, order: segment.order, length: length, tail: try tail(of: segment, length: length))
  }

  /// The last `CaskFormat.segmentTailLength` bytes of `segment` at `length`.
  static func tail(of segment: Segment, length: UInt64) throws -> [UInt8] {
    let count = Int(min(length, UInt64(CaskFormat.segmentTailLength)))
    return [UInt8](try segment.file.read(upTo: count, at: length - UInt64(count)))
  }
}

import Foundation

/// Where a segment sits in the history of the store. Records of a later segment supersede
/// those of an earlier one. Ordinary segments have `sub == 0`; compaction writes its output
/// as `(base: last compacted id, sub: 1, 2, …)`, which sorts after every segment it replaces
/// and before every segment written since it started.
struct SegmentOrder: Comparable, Hashable, Sendable {
  var base: UInt32
  var sub: UInt32

  static func < (lhs: SegmentOrder, rhs: SegmentOrder) -> Bool {
    (lhs.base, lhs.sub) < (rhs.base, rhs.sub)
  }
}

/// An open segment file. Readers hold a reference while they `pread`; once compaction has
/// replaced a segment its file is unlinked, and the descriptor closes when the last reader
/// lets go (ARC), so no read ever fails because of a compaction.
final class Segment: Sendable {
  let id: UInt32
  let order: SegmentOrder
  let file: any StorageFile
  /// The keys of the segment's key epoch: its records and its hint are sealed under them.
  let cipher: RecordCipher
  /// The key epoch named in the segment's header.
  var epoch: UInt32 { cipher.epoch }
  /// A version 5 segment's authenticated link (`SegmentLink`); `nil` before version 5.
  let link: SegmentLink?
  /// Where its first record starts: after the 32-byte header, and the link from version 5 on.
  var recordsStart: UInt64 { Self.recordsStart(linked: link != nil) }

  /// The segment's path under its final name (a segment is created under a temporary name
  /// and renamed; its open file keeps the name it was opened with). Worked out once: every
  /// read names it, for the error it would throw.
  let path: String

  init(id: UInt32, order: SegmentOrder, file: any StorageFile, cipher: RecordCipher, link: SegmentLink? = nil) {
    self.id = id
    self.order = order
    self.file = file
    // A version 5 segment's records are bound to the store that wrote it.
    self.cipher = link.map { cipher.stamped(identity: $0.identity) } ?? cipher
    self.link = link
    let opened = file.path
    path =
      opened.hasSuffix(CaskFormat.temporarySuffix)
      ? String(opened.dropLast(CaskFormat.temporarySuffix.count)) : opened
  }

  /// Where the first record of a segment starts, with a version 5 link or without one.
  static func recordsStart(linked: Bool) -> UInt64 {
    UInt64(CaskFormat.segmentHeaderLength + (linked ? CaskFormat.segmentLinkLength : 0))
  }

  static func fileName(id: UInt32) -> String {
    hexName(id) + "." + CaskFormat.segmentExtension
  }

  static func hintName(id: UInt32) -> String {
    hexName(id) + "." + CaskFormat.hintExtension
  }

  /// Parses `0000002a.seg` or `0000002a.hint` into 42.
  static func id(fromFileName name: String, extension ext: String) -> UInt32? {
    // Exactly the names `fileName(id:)` makes: eight lower-case hex digits, a dot and the
    // extension. (`UInt32(_:radix:)` also takes upper case and a sign, and compaction, which
    // removes its inputs by the name made from the id, then left such a file behind to be
    // read again at the next open.) Read byte by byte: open parses every name in the
    // directory, and this costs no allocation.
    parse(name, extension: ext, foldingCase: false)
  }

  /// For a name that is not a segment name but would be one in lower case (`0000000A.seg`):
  /// its id. Open reports such a file instead of reading it or passing over it in silence.
  static func id(fromForeignName name: String, extension ext: String) -> UInt32? {
    guard id(fromFileName: name, extension: ext) == nil else { return nil }
    // ASCII letters folded byte by byte, no lower-cased copy of every name of the directory:
    // the same answer, since the only character outside ASCII that lower-cases into it (the
    // Kelvin sign, into `k`) is in no segment or hint name.
    return parse(name, extension: ext, foldingCase: true)
  }

  /// Eight hex digits, a dot and `ext` (lower case, ASCII), and nothing else; with
  /// `foldingCase`, upper-case ASCII letters read as lower-case ones.
  private static func parse(_ name: String, extension ext: String, foldingCase: Bool) -> UInt32? {
    let bytes = name.utf8
    let suffix = ext.utf8
    guard bytes.count == 9 + suffix.count else { return nil }
    func folded(_ byte: UInt8) -> UInt8 {
      foldingCase && (65...90).contains(byte) ? byte | 0x20 : byte
    }
    var id: UInt32 = 0
    var index = bytes.startIndex
    for _ in 0..<8 {
      let byte = folded(bytes[index])
      switch byte {
      case 48...57: id = id << 4 | UInt32(byte - 48)
      case 97...102: id = id << 4 | UInt32(byte - 87)
      default: return nil
      }
      bytes.formIndex(after: &index)
    }
    guard bytes[index] == UInt8(ascii: "."),
      bytes[bytes.index(after: index)...].elementsEqual(suffix, by: { folded($0) == $1 })
    else { return nil }
    return id
  }

  private static func hexName(_ id: UInt32) -> String {
    let hex = String(id, radix: 16)
    return String(repeating: "0", count: max(0, 8 - hex.count)) + hex
  }

  // MARK: The 32-byte segment header

  /// The whole header of a new segment: the 32 bytes, then for a version 5 store (`link`
  /// given) the link under `cipher`'s keys, and version 5 in the version field.
  static func encodeHeader(id: UInt32, order: SegmentOrder, cipher: RecordCipher, link: SegmentLink?) throws -> Data {
    guard let link else {
      return Data(encodeHeader(id: id, order: order, version: cipher.version, epoch: cipher.epoch))
    }
    let fixed = encodeHeader(id: id, order: order, version: CaskFormat.authenticatedVersion, epoch: cipher.epoch)
    return Data(fixed + (try link.encoded(after: fixed, keys: cipher.keys)))
  }

  /// - Parameters:
  ///   - version: the store's (records') format version, which decides how its records read.
  ///   - epoch: the key epoch whose data key seals its records (0 in a store without epochs).
  static func encodeHeader(
    id: UInt32, order: SegmentOrder, version: UInt16 = CaskFormat.boundRecordsVersion, epoch: UInt32 = 0
  ) -> [UInt8] {
    var writer = ByteWriter(capacity: CaskFormat.segmentHeaderLength)
    writer.append(contentsOf: CaskFormat.segmentMagic)
    writer.append(version)
    writer.append(UInt16(0))
    writer.append(id)
    writer.append(order.base)
    writer.append(order.sub)
    writer.append(epoch)
    writer.append(CRC32C.checksum(writer.bytes))
    return writer.bytes
  }

  /// Reads and checks a segment header.
  ///
  /// - Returns: the id, order, version and key epoch, or a failure when the header is damaged.
  static func decodeHeader(_ bytes: Data) -> Result<
    (id: UInt32, order: SegmentOrder, version: UInt16, epoch: UInt32), CaskError
  > {
    bytes.withUnsafeBytes { buffer in
      guard buffer.count >= CaskFormat.segmentHeaderLength else {
        return .failure(.corrupt(file: "", offset: 0, reason: "segment header is truncated"))
      }
      var reader = ByteReader(buffer)
      guard let magic = reader.readBytes(8), magic.elementsEqual(CaskFormat.segmentMagic),
        let version = reader.readUInt16(), reader.readUInt16() != nil, let id = reader.readUInt32(),
        let base = reader.readUInt32(), let sub = reader.readUInt32(), let epoch = reader.readUInt32(),
        let crc = reader.readUInt32()
      else { return .failure(.corrupt(file: "", offset: 0, reason: "not a segment header")) }
      guard
        CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[0..<CaskFormat.segmentHeaderChecksummedLength])) == crc
      else {
        return .failure(.corrupt(file: "", offset: 0, reason: "segment header checksum mismatch"))
      }
      guard (CaskFormat.oldestReadableVersion...CaskFormat.formatVersion).contains(version) else {
        return .failure(.unsupportedVersion(found: Int(version), supported: Int(CaskFormat.formatVersion)))
      }
      return .success((id, SegmentOrder(base: base, sub: sub), version, epoch))
    }
  }
}

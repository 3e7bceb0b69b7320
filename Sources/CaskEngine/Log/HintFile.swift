import Foundation

/// One entry of a hint file: where a record of a sealed segment is, and its key.
struct HintEntry: Sendable {
  var isDelete: Bool
  var offset: UInt32
  var length: UInt32
  var key: String
}

/// A hint file lets open index a sealed segment without decrypting every record
/// (Docs/FORMAT.md, "Hint files").
///
/// ```
/// 0 magic "CCHINTS1"(8)   8 RNCryptor v3 key message under the data key, whose plaintext is:
///   version(2) reserved(2) segment id(4) segment length(8) max sequence(8) entry count(4)
///   entries: type(1) reserved(1) key length(2) record offset(4) record length(4) key(key length)
/// ```
/// Everything but the magic is encrypted and authenticated: keys never appear in plaintext.
/// A hint is used only if it authenticates and names the segment's id and exact length.
struct HintFile {
  var segmentID: UInt32
  var segmentLength: UInt64
  var maxSequence: UInt64
  var entries: [HintEntry]

  /// Writes the hint beside its segment in `directory`, atomically. The directory is not
  /// synced: a hint lost in a crash only makes the next open scan the segment.
  func write(in directory: String, fileSystem: any FileSystem, cipher: RecordCipher) throws {
    try AtomicFile.write(
      encoded(cipher: cipher), to: "\(directory)/\(Segment.hintName(id: segmentID))", fileSystem: fileSystem,
      syncingDirectory: nil)
  }

  func encoded(cipher: RecordCipher) throws -> [UInt8] {
    var payload = ByteWriter(
      capacity: CaskFormat.hintPayloadHeaderLength + entries.count * (CaskFormat.hintEntryFixedLength + 16))
    payload.append(CaskFormat.formatVersion)
    payload.append(UInt16(0))
    payload.append(segmentID)
    payload.append(segmentLength)
    payload.append(maxSequence)
    payload.append(UInt32(entries.count))
    for entry in entries {
      let key = Array(entry.key.utf8)
      payload.append(entry.isDelete ? CaskFormat.recordTypeDelete : CaskFormat.recordTypePut)
      payload.append(UInt8(0))
      payload.append(UInt16(key.count))
      payload.append(entry.offset)
      payload.append(entry.length)
      payload.append(contentsOf: key)
    }
    let message = try cipher.seal(Data(payload.bytes))
    return CaskFormat.hintMagic + Array(message)
  }

  /// Decrypts and parses a hint file.
  ///
  /// - Throws: `CaskError.corrupt` when it is damaged in any way; the caller then scans the
  ///   segment instead.
  static func decode(_ bytes: Data, cipher: RecordCipher, path: String) throws -> HintFile {
    let magicLength = CaskFormat.hintMagic.count
    guard bytes.count > magicLength, bytes.prefix(magicLength).elementsEqual(CaskFormat.hintMagic) else {
      throw CaskError.corrupt(file: path, offset: 0, reason: "not a hint file")
    }
    let payload = try cipher.open(Data(bytes.dropFirst(magicLength)), file: path, offset: UInt64(magicLength))
    return try payload.withUnsafeBytes { buffer in
      var reader = ByteReader(buffer)
      let damaged = CaskError.corrupt(file: path, offset: UInt64(magicLength), reason: "malformed hint payload")
      guard let version = reader.readUInt16(),
        (CaskFormat.oldestReadableVersion...CaskFormat.formatVersion).contains(version), reader.readUInt16() != nil,
        let segmentID = reader.readUInt32(), let segmentLength = reader.readUInt64(),
        let maxSequence = reader.readUInt64(), let count = reader.readUInt32(),
        Int(count) <= reader.remaining / CaskFormat.hintEntryFixedLength
      else { throw damaged }
      var entries: [HintEntry] = []
      entries.reserveCapacity(Int(count))
      for _ in 0..<count {
        guard let type = reader.readUInt8(), reader.readUInt8() != nil, let keyLength = reader.readUInt16(),
          let offset = reader.readUInt32(), let length = reader.readUInt32(),
          let keyBytes = reader.readBytes(Int(keyLength)), keyLength > 0,
          type == CaskFormat.recordTypePut || type == CaskFormat.recordTypeDelete,
          let key = String(validating: keyBytes, as: UTF8.self)
        else { throw damaged }
        entries.append(
          HintEntry(isDelete: type == CaskFormat.recordTypeDelete, offset: offset, length: length, key: key))
      }
      guard reader.remaining == 0 else { throw damaged }
      return HintFile(segmentID: segmentID, segmentLength: segmentLength, maxSequence: maxSequence, entries: entries)
    }
  }
}

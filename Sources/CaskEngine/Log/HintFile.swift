import Foundation
import RNCryptorCodec

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
///   [version 3: tag 'H'(1)] version(2) reserved(2) segment id(4) segment length(8) max sequence(8) entry count(4)
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
    if cipher.bindsRecords { payload.append(CaskFormat.messageTagHint) }
    payload.append(cipher.version)
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
    let payload = try bytes.withUnsafeBytes { try HintPayload(file: $0, cipher: cipher, path: path) }
    var entries: [HintEntry] = []
    entries.reserveCapacity(payload.count)
    try payload.forEachEntry { isDelete, offset, length, key in
      entries.append(
        HintEntry(
          isDelete: isDelete, offset: offset, length: length, key: String(decoding: key, as: UTF8.self)))
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
  /// The decrypted payload, mapped when large (see `TransientBuffer`).
  private var plaintext: TransientBuffer
  private var plaintextLength: Int
  private var entriesStart: Int
  private var path: String

  /// Decrypts a hint file and checks its header and every entry (type, key length, UTF-8).
  ///
  /// - Throws: `CaskError.corrupt` when it is damaged in any way.
  init(file bytes: UnsafeRawBufferPointer, cipher: RecordCipher, path: String) throws {
    let magicLength = CaskFormat.hintMagic.count
    guard bytes.count > magicLength, bytes.prefix(magicLength).elementsEqual(CaskFormat.hintMagic) else {
      throw CaskError.corrupt(file: path, offset: 0, reason: "not a hint file")
    }
    let message = UnsafeRawBufferPointer(rebasing: bytes[magicLength...])
    let plaintext = try TransientBuffer(count: message.count, purpose: path)
    let plaintextLength = try cipher.open(message, into: plaintext.bytes, file: path, offset: UInt64(magicLength))
    let damaged = CaskError.corrupt(file: path, offset: UInt64(magicLength), reason: "malformed hint payload")
    let header = try { () throws -> (UInt32, UInt64, UInt64, Int, Int) in
      let buffer = UnsafeRawBufferPointer(rebasing: plaintext.bytes[0..<plaintextLength])
      var reader = ByteReader(buffer)
      // From version 3 on the payload is tagged as a hint's: no key or value message reads as one.
      if cipher.bindsRecords {
        guard reader.readUInt8() == CaskFormat.messageTagHint else { throw damaged }
      }
      guard let version = reader.readUInt16(), version == cipher.version, reader.readUInt16() != nil,
        let segmentID = reader.readUInt32(), let segmentLength = reader.readUInt64(),
        let maxSequence = reader.readUInt64(), let count = reader.readUInt32(),
        Int(count) <= reader.remaining / CaskFormat.hintEntryFixedLength
      else { throw damaged }
      return (segmentID, segmentLength, maxSequence, Int(count), buffer.count - reader.remaining)
    }()
    (segmentID, segmentLength, maxSequence, count, entriesStart) = header
    self.plaintext = plaintext
    self.plaintextLength = plaintextLength
    self.path = path
    // Check every entry now, so a damaged hint is refused before any of it is used.
    try forEachEntry { _, _, _, key in
      guard HintPayload.isValidUTF8(key) else { throw damaged }
    }
  }

  /// Calls `body` with each entry in order: whether it is a delete, the record's offset and
  /// length, and the key's UTF-8 bytes (valid only during the call).
  ///
  /// - Throws: `CaskError.corrupt` for a malformed entry, and what `body` throws.
  func forEachEntry(
    _ body: (_ isDelete: Bool, _ offset: UInt32, _ length: UInt32, _ key: UnsafeRawBufferPointer) throws -> Void
  ) throws {
    let damaged = CaskError.corrupt(
      file: path, offset: UInt64(CaskFormat.hintMagic.count), reason: "malformed hint payload")
    do {
      var reader = ByteReader(UnsafeRawBufferPointer(rebasing: plaintext.bytes[entriesStart..<plaintextLength]))
      for _ in 0..<count {
        guard let type = reader.readUInt8(), reader.readUInt8() != nil, let keyLength = reader.readUInt16(),
          let offset = reader.readUInt32(), let length = reader.readUInt32(), keyLength > 0,
          type == CaskFormat.recordTypePut || type == CaskFormat.recordTypeDelete,
          let key = reader.readBytes(Int(keyLength))
        else { throw damaged }
        try body(type == CaskFormat.recordTypeDelete, offset, length, key)
      }
      guard reader.remaining == 0 else { throw damaged }
    }
  }

  /// The bytes at the start of a hint file that `claimedCount` reads: the magic, the
  /// message's header and two blocks of ciphertext.
  static let headLength = CaskFormat.hintMagic.count + RNCryptor.Format.keyHeaderLength + 32

  /// The entry count a hint file's header claims, decrypted from its first `headLength` bytes
  /// **without authenticating them**, and never more than a file of `fileLength` bytes can
  /// hold; `nil` when the head is not a hint's. Only for sizing the index before the hints are
  /// read for real (each is then authenticated before any of its entries is used): a forged
  /// count costs at most memory in proportion to the file's size.
  static func claimedCount(head: UnsafeRawBufferPointer, fileLength: UInt64, cipher: RecordCipher) -> Int? {
    let magicLength = CaskFormat.hintMagic.count
    guard head.count >= headLength, head.prefix(magicLength).elementsEqual(CaskFormat.hintMagic) else { return nil }
    var plaintext: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    let decrypted = withUnsafeMutableBytes(of: &plaintext) { buffer in
      (try? RNCryptor.unauthenticatedPrefix(
        of: UnsafeRawBufferPointer(rebasing: head[magicLength...]), keys: cipher.keys, into: buffer)) == true
    }
    guard decrypted else { return nil }
    let count = withUnsafeBytes(of: &plaintext) {
      UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 24 + cipher.tagLength, as: UInt32.self))
    }
    let overhead = UInt64(
      magicLength + RNCryptor.Format.keyHeaderLength + RNCryptor.Format.hmacLength + CaskFormat.hintPayloadHeaderLength)
    let room = fileLength > overhead ? (fileLength - overhead) / UInt64(CaskFormat.hintEntryFixedLength + 1) : 0
    return Int(min(UInt64(count), room))
  }

  /// One entry of a hint, read in place.
  struct EntryView {
    var isDelete: Bool
    var offset: UInt32
    var length: UInt32
    /// The key's UTF-8 bytes, valid during the `forEachBatch` call that gave it.
    var key: UnsafeRawBufferPointer
  }

  /// Calls `body` with the entries in order, up to `size` at a time, so that the caller can
  /// start fetching what a whole batch needs before it handles the first entry.
  ///
  /// - Throws: `CaskError.corrupt` for a malformed entry (after the batches before it), and
  ///   what `body` throws.
  func forEachBatch(of size: Int, _ body: (UnsafeBufferPointer<EntryView>) throws -> Void) throws {
    try withUnsafeTemporaryAllocation(of: EntryView.self, capacity: size) { batch in
      var filled = 0
      try forEachEntry { isDelete, offset, length, key in
        // The key points into `plaintext`, which outlives this whole call.
        batch.initializeElement(at: filled, to: EntryView(isDelete: isDelete, offset: offset, length: length, key: key))
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

import Foundation
import RNCryptorCodec

/// Package-only doors into the format's internal encoders, for the libFuzzer targets under
/// Fuzz/ (see Docs/RELIABILITY.md). The fuzz targets open real stores on an in-memory file
/// system through the public API; these helpers only let them build well-formed files (for
/// seed corpora) and repair checksums (so that mutated inputs reach past the CRC checks into
/// the parsers behind them). Nothing here is used by the engine itself.
package enum FuzzingEntry {
  /// CRC-32C of `bytes`, as every checksum of the format.
  package static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
    CRC32C.checksum(Array(bytes))
  }

  /// A 32-byte segment header for an ordinary segment (`sub` 0) or a compaction output.
  /// `epoch` is the key epoch the header names (0 in a store without key epochs).
  package static func segmentHeader(
    id: UInt32, base: UInt32, sub: UInt32, version: UInt16 = CaskFormat.boundRecordsVersion, epoch: UInt32 = 0
  ) -> [UInt8] {
    Segment.encodeHeader(id: id, order: SegmentOrder(base: base, sub: sub), version: version, epoch: epoch)
  }

  /// Appends one version 3 record, sealed as the writer seals it for its place: at the end of
  /// `buffer`, which holds segment `segmentID` from its first byte.
  package static func appendBoundRecord(
    to buffer: inout [UInt8], segmentID: UInt32, delete: Bool, flags: UInt8, sequence: UInt64, key: String,
    value: Data?, dataKeys: RNCryptor.Keys
  ) throws {
    let cipher = RecordCipher(keys: dataKeys)
    let type = delete ? CaskFormat.recordTypeDelete : CaskFormat.recordTypePut
    let valueMessage = try value.map { try cipher.sealValue($0, forKey: key) }
    let digest =
      valueMessage.map { message in message.withUnsafeBytes { RecordBinding.digest(ofValueMessage: $0) } }
      ?? [UInt8](repeating: 0, count: CaskFormat.valueDigestLength)
    let binding = RecordBinding(
      type: type, flags: flags, segmentID: segmentID, offset: UInt64(buffer.count), sequence: sequence,
      valueDigest: digest)
    RecordEncoder.append(
      to: &buffer, type: type, flags: flags, sequence: sequence,
      keyMessage: try cipher.sealKey(key, binding: binding), valueMessage: valueMessage)
  }

  /// Appends one record, with its CRC, exactly as the writer does.
  package static func appendRecord(
    to buffer: inout [UInt8], delete: Bool, flags: UInt8, sequence: UInt64, keyMessage: Data, valueMessage: Data?
  ) {
    RecordEncoder.append(
      to: &buffer, type: delete ? CaskFormat.recordTypeDelete : CaskFormat.recordTypePut, flags: flags,
      sequence: sequence, keyMessage: keyMessage, valueMessage: valueMessage)
  }

  /// The plaintext a version 3 key message holds for a record at `offset` of segment
  /// `segmentID` (its binding, then the key), given the record's value message (`nil` for a
  /// delete).
  package static func keyPlaintext(
    _ key: Data, delete: Bool, flags: UInt8, segmentID: UInt32, offset: UInt64, sequence: UInt64,
    valueMessage: Data?
  ) -> Data {
    let digest =
      valueMessage.map { message in message.withUnsafeBytes { RecordBinding.digest(ofValueMessage: $0) } }
      ?? [UInt8](repeating: 0, count: CaskFormat.valueDigestLength)
    let binding = RecordBinding(
      type: delete ? CaskFormat.recordTypeDelete : CaskFormat.recordTypePut, flags: flags, segmentID: segmentID,
      offset: offset, sequence: sequence, valueDigest: digest)
    var prefix = [UInt8](repeating: 0, count: CaskFormat.keyBindingLength)
    prefix.withUnsafeMutableBytes { binding.encode(into: $0) }
    return Data(prefix) + key
  }

  /// The header file (`CASK`) for a wrapped data key.
  package static func storeHeader(wrappedKey: Data, passwordWrapped: Bool, version: UInt16) -> [UInt8] {
    StoreHeader(version: version, passwordWrapped: passwordWrapped, wrappedKey: wrappedKey).encoded()
  }

  /// The header file (`CASK`) of a version 4 store: `wrappedKey` wrapped under keys, and the
  /// key ring's message `keyRing` (which is not checked here).
  package static func keyRingStoreHeader(wrappedKey: Data, keyRing: Data) -> [UInt8] {
    StoreHeader(version: CaskFormat.keyEpochsVersion, wrapping: .keys, wrappedKey: wrappedKey, keyRing: keyRing)
      .encoded()
  }

  /// A key ring's plaintext (Docs/FORMAT.md, section 3a) naming `currentEpoch` and the older
  /// epochs' 64-byte data keys, without a pinned manifest; the caller seals it.
  package static func keyRingPlaintext(currentEpoch: UInt32, older: [(epoch: UInt32, dataKey: Data)]) -> Data {
    var writer = ByteWriter(capacity: CaskFormat.keyRingFixedLength + older.count * CaskFormat.keyRingEntryLength)
    writer.append(CaskFormat.messageTagKeyRing)
    writer.append(UInt8(0))
    writer.append(UInt16(0))
    writer.append(currentEpoch)
    writer.append(UInt32(older.count))
    writer.append(UInt32(0))
    writer.append(contentsOf: [UInt8](repeating: 0, count: 32))
    for (epoch, dataKey) in older {
      writer.append(epoch)
      writer.append(contentsOf: dataKey)
    }
    return Data(writer.bytes)
  }

  /// The header file (`CASK`) of a data key wrapped in a key message under the keys scrypt
  /// derives with `parameters` and `salt` (which are not checked here).
  package static func scryptStoreHeader(
    keyMessage: Data, parameters: RNCryptor.ScryptParameters, salt: Data, version: UInt16
  ) -> [UInt8] {
    StoreHeader(version: version, wrapping: .scrypt(parameters, salt: salt), wrappedKey: keyMessage).encoded()
  }

  /// The plaintext a value message holds for `value` under `key` (key length, key, value).
  package static func valuePlaintext(_ value: Data, forKey key: String, dataKeys: RNCryptor.Keys) throws -> Data {
    let cipher = RecordCipher(keys: dataKeys)
    return try cipher.open(cipher.sealValue(value, forKey: key), file: "", offset: 0)
  }

  /// One entry of a hint file.
  package struct HintRecord {
    package var isDelete: Bool
    package var offset: UInt32
    package var length: UInt32
    package var key: String

    package init(isDelete: Bool, offset: UInt32, length: UInt32, key: String) {
      self.isDelete = isDelete
      self.offset = offset
      self.length = length
      self.key = key
    }
  }

  /// The plaintext payload of a hint file (before it is sealed under the data key): with a
  /// group section when `grouped` (a "CCHINTS2" file's), else as a "CCHINTS1" file's.
  package static func hintPayload(
    segmentID: UInt32, segmentLength: UInt64, maxSequence: UInt64, entries: [HintRecord], dataKeys: RNCryptor.Keys,
    grouped: Bool = false
  ) throws -> Data {
    let hint = HintFile(
      segmentID: segmentID, segmentLength: segmentLength, maxSequence: maxSequence,
      entries: entries.map { HintEntry(isDelete: $0.isDelete, offset: $0.offset, length: $0.length, key: $0.key) })
    let cipher = RecordCipher(keys: dataKeys)
    let file = Data(try hint.encoded(cipher: cipher, grouped: grouped))
    return try cipher.open(Data(file.dropFirst(CaskFormat.hintMagic.count)), file: "", offset: 0)
  }

  /// The plaintext payload of `file`, a hint a version 5 store wrote under `dataKeys` (its
  /// puts' attachment sections included), encoded again: with each section's groups named by
  /// number in a table of names (`namingGroups`, a "CCHINTS3" hint's) or spelled out (a
  /// "CCHINTS2" hint's). What `fuzz-hint` seals behind either magic for the store whose records
  /// attach keys.
  ///
  /// - Throws: `CaskError` when `file` is not an authentic hint of such a store.
  package static func attachedHintPayload(ofFile file: [UInt8], dataKeys: RNCryptor.Keys, namingGroups: Bool)
    throws -> Data
  {
    let cipher = RecordCipher(keys: dataKeys, shortTombstones: true)
    let hint = try HintFile.decode(Data(file), cipher: cipher, path: CaskFormat.hintExtension)
    let encoded = try hint.encoded(cipher: cipher, namingGroups: namingGroups)
    return try cipher.open(Data(encoded.dropFirst(CaskFormat.hintMagic.count)), file: "", offset: 0)
  }

  /// One segment a manifest lists.
  package struct ManifestSegment {
    package var id: UInt32
    package var base: UInt32
    package var sub: UInt32
    package var isActive: Bool
    package var length: UInt64
    package var epoch: UInt32

    package init(id: UInt32, base: UInt32, sub: UInt32, isActive: Bool, length: UInt64, epoch: UInt32 = 0) {
      self.id = id
      self.base = base
      self.sub = sub
      self.isActive = isActive
      self.length = length
      self.epoch = epoch
    }
  }

  /// The plaintext payload of a `MANIFEST` file (before it is sealed under the current data key
  /// behind `CaskFormat.manifestMagic`) listing `segments`, with the key epochs' layout (header
  /// version 4) when `hasEpochs`.
  package static func manifestPayload(
    generation: UInt64, lastSequence: UInt64, nextSegmentID: UInt32, segments: [ManifestSegment],
    retired: [UInt32] = [], hasEpochs: Bool, dataKeys: RNCryptor.Keys
  ) throws -> Data {
    let manifest = Manifest(
      generation: generation, lastSequence: lastSequence, nextSegmentID: nextSegmentID,
      segments: segments.map {
        Manifest.Entry(
          id: $0.id, order: SegmentOrder(base: $0.base, sub: $0.sub), isActive: $0.isActive, length: $0.length,
          epoch: $0.epoch)
      }, retired: retired, pending: [], hasEpochs: hasEpochs)
    let cipher = RecordCipher(keys: dataKeys)
    let file = Data(try manifest.encoded(cipher: cipher))
    return try cipher.open(Data(file.dropFirst(CaskFormat.manifestMagic.count)), file: "", offset: 0)
  }

  /// Rewrites the checksums of a segment file in place wherever its bytes have the shape of a
  /// header or a record: the segment header's CRC, then each record's, walking the lengths the
  /// records claim until one runs past the end.
  package static func repairSegmentChecksums(_ bytes: inout [UInt8]) {
    let headerLength = CaskFormat.segmentHeaderLength
    guard bytes.count >= headerLength else { return }
    store(checksum(bytes[0..<CaskFormat.segmentHeaderChecksummedLength]), in: &bytes, at: headerLength - 4)
    repairRecordChecksums(&bytes, from: headerLength)
  }

  /// Sets the CRC of every record from `position` on, as far as the records' lengths reach
  /// before one runs past the end.
  package static func repairRecordChecksums(_ bytes: inout [UInt8], from position: Int) {
    var position = position
    while bytes.count - position >= CaskFormat.recordHeaderLength {
      let keyLength = Int(load(bytes, at: position + 16))
      let valueLength = Int(load(bytes, at: position + 20))
      let total = CaskFormat.recordHeaderLength + keyLength + valueLength
      guard total <= bytes.count - position else { return }
      RecordEncoder.setChecksum(in: &bytes, recordAt: position, length: total)
      position += total
    }
  }

  /// Rewrites the CRC of a header file in place when the lengths it claims fit: the wrapped
  /// key's, and in a version 4 header with the key ring flag, the ring's after it.
  package static func repairHeaderChecksum(_ bytes: inout [UInt8]) {
    let fixed = CaskFormat.headerFixedLength
    guard bytes.count >= fixed + 4 else { return }
    var end = fixed + Int(load(bytes, at: CaskFormat.headerWrappedLengthOffset))
    let version = UInt16(bytes[CaskFormat.headerVersionOffset]) | UInt16(bytes[CaskFormat.headerVersionOffset + 1]) << 8
    let flags = UInt16(bytes[CaskFormat.headerFlagsOffset]) | UInt16(bytes[CaskFormat.headerFlagsOffset + 1]) << 8
    if version == CaskFormat.keyEpochsVersion && flags & CaskFormat.headerFlagKeyRing != 0 {
      // Prevents: the CRC written over the ring's length, so no mutated ring got past the CRC.
      guard end <= bytes.count - 8 else { return }
      end += 4 + Int(load(bytes, at: end))
    }
    guard end <= bytes.count - 4 else { return }
    store(checksum(bytes[0..<end]), in: &bytes, at: end)
  }

  static func load(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    bytes.withUnsafeBytes { loadLittleEndian($0, at: offset, as: UInt32.self) }
  }

  static func store(_ value: UInt32, in bytes: inout [UInt8], at offset: Int) {
    withUnsafeBytes(of: value.littleEndian) { word in
      for index in 0..<4 { bytes[offset + index] = word[index] }
    }
  }
}

// MARK: Whole-message and whole-record encoders

// The writer seals messages straight into each record's buffer (`RecordEncoder.make`,
// `RecordCipher.sealKey(_:into:)`); these build the same bytes from finished pieces, for the
// fuzz targets' seeds and for tests that craft segments by hand. The engine never calls them.

extension RecordEncoder {
  /// Appends one record to `buffer` and returns its length.
  @discardableResult
  static func append(
    to buffer: inout [UInt8], type: UInt8, flags: UInt8, sequence: UInt64, keyMessage: Data, valueMessage: Data?
  ) -> Int {
    let start = buffer.count
    let valueLength = valueMessage?.count ?? 0
    let total = CaskFormat.recordHeaderLength + keyMessage.count + valueLength
    // No reserveCapacity here: it allocates exactly what is asked, so reserving per record
    // would copy a batch's whole buffer once per record. The caller reserves the batch.
    var header = ByteWriter(capacity: CaskFormat.recordHeaderLength)
    header.append(UInt32(0))
    header.append(type)
    header.append(flags)
    header.append(UInt16(0))
    header.append(sequence)
    header.append(UInt32(keyMessage.count))
    header.append(UInt32(valueLength))
    buffer.append(contentsOf: header.bytes)
    buffer.append(contentsOf: keyMessage)
    if let valueMessage { buffer.append(contentsOf: valueMessage) }
    setChecksum(in: &buffer, recordAt: start, length: total)
    return total
  }
}

extension RecordCipher {
  /// The message for a key's UTF-8 bytes; from version 3 on behind its record's `binding`.
  func sealKey(_ key: String, binding: RecordBinding? = nil) throws -> Data {
    let keyBytes = Array(key.utf8)
    let delete = binding?.type == CaskFormat.recordTypeDelete
    var message = [UInt8](repeating: 0, count: keyMessageLength(keyLength: keyBytes.count, delete: delete))
    try keyBytes.withUnsafeBytes { keyBuffer in
      try message.withUnsafeMutableBytes { try sealKey(keyBuffer, binding: binding, into: $0) }
    }
    return Data(message)
  }

  /// The message for a value, bound to its key: the plaintext is the key's length (2 bytes,
  /// little-endian), the key's UTF-8 bytes, then the value. A value moved to another record
  /// (or read through a wrong index entry) fails `openValue` instead of being returned for
  /// the wrong key; the length keeps "user:1" from matching a value of "user:10".
  func sealValue(_ value: Data, forKey key: String) throws -> Data {
    let keyLength = key.utf8.count
    var plaintext = Data(capacity: tagLength + CaskFormat.valueKeyLengthPrefix + keyLength + value.count)
    if bindsRecords { plaintext.append(CaskFormat.messageTagValue) }
    withUnsafeBytes(of: UInt16(keyLength).littleEndian) { plaintext.append(contentsOf: $0) }
    plaintext.append(contentsOf: key.utf8)
    plaintext.append(value)
    return try seal(plaintext)
  }
}

import Foundation

/// The fixed 24-byte header in front of every record of a segment (Docs/FORMAT.md, "Records").
///
/// ```
/// 0  crc32c(4)  4 type(1)  5 flags(1)  6 reserved(2)  8 sequence(8)  16 key length(4)  20 value length(4)
/// ```
/// The CRC covers every byte of the record after itself: the rest of this header, the key
/// message and the value message.
struct RecordHeader: Equatable {
  var crc: UInt32
  var type: UInt8
  var flags: UInt8
  var sequence: UInt64
  var keyLength: UInt32
  var valueLength: UInt32

  /// Header plus both messages.
  var totalLength: Int { CaskFormat.recordHeaderLength + Int(keyLength) + Int(valueLength) }

  var isDelete: Bool { type == CaskFormat.recordTypeDelete }
  var endsBatch: Bool { flags & CaskFormat.recordFlagBatchEnd != 0 }
  var startsBatch: Bool { flags & CaskFormat.recordFlagBatchStart != 0 }

  /// Parses the fixed fields; checks only what can be checked without the body.
  ///
  /// - Returns: `nil` when the type is unknown, reserved bits are set, or a delete carries a value.
  static func parse(_ bytes: UnsafeRawBufferPointer) -> RecordHeader? {
    guard bytes.count >= CaskFormat.recordHeaderLength else { return nil }
    let header = RecordHeader(
      crc: loadLittleEndian(bytes, at: 0, as: UInt32.self),
      type: bytes[CaskFormat.recordTypeOffset],
      flags: bytes[CaskFormat.recordFlagsOffset],
      sequence: loadLittleEndian(bytes, at: CaskFormat.recordSequenceOffset, as: UInt64.self),
      keyLength: loadLittleEndian(bytes, at: CaskFormat.recordKeyLengthOffset, as: UInt32.self),
      valueLength: loadLittleEndian(bytes, at: CaskFormat.recordValueLengthOffset, as: UInt32.self))
    let reserved = loadLittleEndian(bytes, at: CaskFormat.recordReservedOffset, as: UInt16.self)
    guard header.type == CaskFormat.recordTypePut || header.type == CaskFormat.recordTypeDelete,
      header.flags & ~(CaskFormat.recordFlagBatchEnd | CaskFormat.recordFlagBatchStart) == 0, reserved == 0,
      header.keyLength > 0,
      !(header.isDelete && header.valueLength != 0)
    else { return nil }
    return header
  }

  /// Whether `record` (header and body, `totalLength` bytes) matches its CRC.
  static func checksumMatches(_ record: UnsafeRawBufferPointer) -> Bool {
    guard record.count >= CaskFormat.recordHeaderLength else { return false }
    let stored = loadLittleEndian(record, at: 0, as: UInt32.self)
    return CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[4...])) == stored
  }
}

/// Encodes records into a write buffer.
enum RecordEncoder {
  /// A whole record whose key and value messages `fill` writes straight into place. The
  /// header is complete except for the flags, the sequence and the CRC, which `finish` sets
  /// once the writer has assigned them.
  ///
  /// - Parameter fill: receives the key message's and the value message's bytes (the latter
  ///   empty for a delete) and must write every byte of both.
  static func make(
    type: UInt8, keyMessageLength: Int, valueMessageLength: Int,
    fill: (_ key: UnsafeMutableRawBufferPointer, _ value: UnsafeMutableRawBufferPointer) throws -> Void
  ) throws -> RecordBytes {
    let headerLength = CaskFormat.recordHeaderLength
    let total = headerLength + keyMessageLength + valueMessageLength
    let bytes = RecordBytes.zeroed(count: total)
    try bytes.withUnsafeMutableBytes { record in
      record[CaskFormat.recordTypeOffset] = type
      record.storeBytes(
        of: UInt32(keyMessageLength).littleEndian, toByteOffset: CaskFormat.recordKeyLengthOffset, as: UInt32.self)
      record.storeBytes(
        of: UInt32(valueMessageLength).littleEndian, toByteOffset: CaskFormat.recordValueLengthOffset, as: UInt32.self)
      let keyEnd = headerLength + keyMessageLength
      try fill(
        UnsafeMutableRawBufferPointer(rebasing: record[headerLength..<keyEnd]),
        UnsafeMutableRawBufferPointer(rebasing: record[keyEnd...]))
    }
    return bytes
  }

  /// Sets the flags, the sequence number and the CRC of a record made by `make`.
  static func finish(_ record: UnsafeMutableRawBufferPointer, flags: UInt8, sequence: UInt64) {
    record[CaskFormat.recordFlagsOffset] = flags
    record.storeBytes(of: sequence.littleEndian, toByteOffset: CaskFormat.recordSequenceOffset, as: UInt64.self)
    let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[4...]))
    record.storeBytes(of: crc.littleEndian, toByteOffset: 0, as: UInt32.self)
  }

  /// Recomputes the CRC of the record at `start` after a change (for example of its flags).
  static func setChecksum(in buffer: inout [UInt8], recordAt start: Int, length: Int) {
    let crc = buffer.withUnsafeBytes {
      CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start + 4..<start + length]))
    }
    withUnsafeBytes(of: crc.littleEndian) { crcBytes in
      for index in 0..<4 { buffer[start + index] = crcBytes[index] }
    }
  }
}

import Foundation
import RNCryptorCodec

/// What a version 3 key message binds its record to (Docs/FORMAT.md, "Record binding"): the
/// record's type and batch flags, the segment and offset it was written at, its sequence
/// number, and the value message's HMAC. Sealed under the data key in front of the key, so a
/// record moved, duplicated, reordered, turned into a tombstone, given another value or
/// spliced together from parts of others no longer matches its own key message.
///
/// ```
/// 0 tag 'K'(1)  1 type(1)  2 flags(1)  3 reserved(1)  4 segment id(4)  8 offset(8)
/// 16 sequence(8)  24 value digest(32)  56 key bytes
/// ```
/// A version 5 tombstone's binding is short: its tag names the type, and a delete has no
/// value to digest.
/// ```
/// 0 tag 'D'(1)  1 flags(1)  2 segment id(4)  6 offset(8)  14 sequence(8)  22 key bytes
/// ```
/// A version 5 put that carries attached keys has the long binding under the tag 'A', and its
/// key's length (2) in front of the key, whose attachment section follows (`AttachedKeys`).
struct RecordBinding: Equatable, Sendable {
  var type: UInt8
  var flags: UInt8
  var segmentID: UInt32
  var offset: UInt64
  var sequence: UInt64
  /// The value message's last 32 bytes (its HMAC); zeros for a delete.
  var valueDigest: [UInt8]
  /// Whether this is a version 5 tombstone's short binding (tag 'D', 22 bytes).
  var short = false
  /// Whether this is a version 5 put's binding with attached keys after its key (tag 'A';
  /// `RecordCipher.sealKey` writes the tag when it is given a section).
  var attaching = false

  /// The length of the plaintext in front of the key.
  var encodedLength: Int { short ? CaskFormat.tombstoneBindingLength : CaskFormat.keyBindingLength }

  /// This binding as a version 5 segment seals it: a delete's in the short layout.
  func inSegment(shortTombstones: Bool) -> RecordBinding {
    var binding = self
    binding.short = shortTombstones && type == CaskFormat.recordTypeDelete
    return binding
  }

  /// The value digest of a record's value message: its last 32 bytes, or zeros when there is
  /// no value (a delete).
  static func digest(ofValueMessage message: UnsafeRawBufferPointer) -> [UInt8] {
    let length = CaskFormat.valueDigestLength
    guard message.count >= length else { return [UInt8](repeating: 0, count: length) }
    return Array(message[(message.count - length)...])
  }

  /// Writes the prefix of a key message's plaintext (`encodedLength` bytes) into `output`.
  func encode(into output: UnsafeMutableRawBufferPointer) {
    if short {
      return Self.encodeTombstone(flags: flags, segmentID: segmentID, offset: offset, sequence: sequence, into: output)
    }
    precondition(valueDigest.count == CaskFormat.valueDigestLength)
    valueDigest.withUnsafeBytes { digest in
      Self.encode(
        type: type, flags: flags, segmentID: segmentID, offset: offset, sequence: sequence, valueDigest: digest,
        into: output)
    }
  }

  /// Writes the 56-byte prefix of a key message's plaintext for these fields into `output`,
  /// taking the value digest from the value message in place (`digest(ofValueMessage:)`'s
  /// rule) when `valueMessage` is given, zeros when it is `nil` (a delete). Prevents: an
  /// array for the digest and another for the binding on every put.
  static func encode(
    type: UInt8, flags: UInt8, segmentID: UInt32, offset: UInt64, sequence: UInt64,
    valueMessage: UnsafeRawBufferPointer?, into output: UnsafeMutableRawBufferPointer
  ) {
    let length = CaskFormat.valueDigestLength
    guard let valueMessage, valueMessage.count >= length else {
      return withUnsafeTemporaryAllocation(byteCount: length, alignment: 1) { zeros in
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        encode(
          type: type, flags: flags, segmentID: segmentID, offset: offset, sequence: sequence,
          valueDigest: UnsafeRawBufferPointer(zeros), into: output)
      }
    }
    encode(
      type: type, flags: flags, segmentID: segmentID, offset: offset, sequence: sequence,
      valueDigest: UnsafeRawBufferPointer(rebasing: valueMessage[(valueMessage.count - length)...]), into: output)
  }

  private static func encode(
    type: UInt8, flags: UInt8, segmentID: UInt32, offset: UInt64, sequence: UInt64,
    valueDigest: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
  ) {
    precondition(output.count >= CaskFormat.keyBindingLength && valueDigest.count == CaskFormat.valueDigestLength)
    output[0] = CaskFormat.messageTagKey
    output[CaskFormat.bindingTypeOffset] = type
    output[CaskFormat.bindingFlagsOffset] = flags
    output[CaskFormat.bindingReservedOffset] = 0
    output.storeBytes(of: segmentID.littleEndian, toByteOffset: CaskFormat.bindingSegmentOffset, as: UInt32.self)
    output.storeBytes(of: offset.littleEndian, toByteOffset: CaskFormat.bindingOffsetOffset, as: UInt64.self)
    output.storeBytes(of: sequence.littleEndian, toByteOffset: CaskFormat.bindingSequenceOffset, as: UInt64.self)
    UnsafeMutableRawBufferPointer(rebasing: output[CaskFormat.bindingDigestOffset..<CaskFormat.keyBindingLength])
      .copyMemory(from: valueDigest)
  }

  /// Writes the 22-byte prefix of a version 5 tombstone's key message into `output`.
  static func encodeTombstone(
    flags: UInt8, segmentID: UInt32, offset: UInt64, sequence: UInt64, into output: UnsafeMutableRawBufferPointer
  ) {
    precondition(output.count >= CaskFormat.tombstoneBindingLength)
    output[0] = CaskFormat.messageTagTombstone
    output[CaskFormat.tombstoneBindingFlagsOffset] = flags
    output.storeBytes(
      of: segmentID.littleEndian, toByteOffset: CaskFormat.tombstoneBindingSegmentOffset, as: UInt32.self)
    output.storeBytes(of: offset.littleEndian, toByteOffset: CaskFormat.tombstoneBindingOffsetOffset, as: UInt64.self)
    output.storeBytes(
      of: sequence.littleEndian, toByteOffset: CaskFormat.tombstoneBindingSequenceOffset, as: UInt64.self)
  }

  /// Why a binding's offset field differs from the one expected: the place (its lower 32
  /// bits) or, in a version 5 segment, the store that sealed it (`RecordCipher.bindingStamp`).
  static func offsetMismatch(sealed: UInt64, found: UInt64) -> String {
    guard sealed & 0xFFFF_FFFF == found & 0xFFFF_FFFF else {
      return "record was sealed for another offset (a moved, duplicated or reordered record)"
    }
    return "record was sealed by another store or copy sharing the data key (a spliced record)"
  }

  /// Parses the prefix of an opened key message's plaintext.
  ///
  /// - Parameter shortTombstones: whether the message is from a version 5 segment, where a
  ///   delete's binding is short (tag 'D') and only there.
  /// - Returns: `nil` when the plaintext is too short, is not tagged as a key message of the
  ///   segment's layout (a 'D' before version 5, a long delete binding from version 5 on), or
  ///   has reserved bits set.
  static func decode(_ plaintext: UnsafeRawBufferPointer, shortTombstones: Bool) -> RecordBinding? {
    if shortTombstones, plaintext.count >= CaskFormat.tombstoneBindingLength,
      plaintext[0] == CaskFormat.messageTagTombstone
    {
      return RecordBinding(
        type: CaskFormat.recordTypeDelete, flags: plaintext[CaskFormat.tombstoneBindingFlagsOffset],
        segmentID: loadLittleEndian(plaintext, at: CaskFormat.tombstoneBindingSegmentOffset, as: UInt32.self),
        offset: loadLittleEndian(plaintext, at: CaskFormat.tombstoneBindingOffsetOffset, as: UInt64.self),
        sequence: loadLittleEndian(plaintext, at: CaskFormat.tombstoneBindingSequenceOffset, as: UInt64.self),
        valueDigest: [UInt8](repeating: 0, count: CaskFormat.valueDigestLength), short: true)
    }
    guard isLongBinding(plaintext, shortTombstones: shortTombstones) else { return nil }
    return RecordBinding(
      type: plaintext[CaskFormat.bindingTypeOffset], flags: plaintext[CaskFormat.bindingFlagsOffset],
      segmentID: loadLittleEndian(plaintext, at: CaskFormat.bindingSegmentOffset, as: UInt32.self),
      offset: loadLittleEndian(plaintext, at: CaskFormat.bindingOffsetOffset, as: UInt64.self),
      sequence: loadLittleEndian(plaintext, at: CaskFormat.bindingSequenceOffset, as: UInt64.self),
      valueDigest: Array(plaintext[CaskFormat.bindingDigestOffset..<CaskFormat.keyBindingLength]),
      attaching: plaintext[0] == CaskFormat.messageTagAttached)
  }

  /// Whether `plaintext` begins with a long binding of its segment's layout: tag 'K', or (in a
  /// version 5 segment) 'A' for a put, reserved byte 0, and no delete in a version 5 segment.
  static func isLongBinding(_ plaintext: UnsafeRawBufferPointer, shortTombstones: Bool) -> Bool {
    guard plaintext.count >= CaskFormat.keyBindingLength, plaintext[CaskFormat.bindingReservedOffset] == 0 else {
      return false
    }
    let type = plaintext[CaskFormat.bindingTypeOffset]
    switch plaintext[0] {
    case CaskFormat.messageTagKey: return !(shortTombstones && type == CaskFormat.recordTypeDelete)
    case CaskFormat.messageTagAttached: return shortTombstones && type == CaskFormat.recordTypePut
    default: return false
    }
  }

  /// Where the key lies in an opened key message's plaintext that begins with a valid
  /// binding of its segment's layout, and the attachment section after it (empty for none).
  ///
  /// - Returns: `nil` when an attaching binding's key length runs past the plaintext.
  static func keyAndAttachments(in plaintext: UnsafeRawBufferPointer) -> (key: Range<Int>, section: Range<Int>)? {
    switch plaintext.first {
    case CaskFormat.messageTagTombstone:
      return (CaskFormat.tombstoneBindingLength..<plaintext.count, plaintext.count..<plaintext.count)
    case CaskFormat.messageTagAttached:
      let start = CaskFormat.keyBindingLength + CaskFormat.attachedKeyLengthWidth
      guard plaintext.count >= start else { return nil }
      let length = Int(loadLittleEndian(plaintext, at: CaskFormat.keyBindingLength, as: UInt16.self))
      guard plaintext.count >= start + length else { return nil }
      return (start..<start + length, start + length..<plaintext.count)
    default:
      return (CaskFormat.keyBindingLength..<plaintext.count, plaintext.count..<plaintext.count)
    }
  }

  /// Why a record found at `offset` of segment `segmentID`, with header `header` and value
  /// digest `digest`, is not the record this binding was sealed for; `nil` when it is.
  func mismatch(header: RecordHeader, segmentID: UInt32, offset: UInt64, valueDigest digest: [UInt8]) -> String? {
    if type != header.type { return "record type does not match its sealed key (a forged record)" }
    if self.segmentID != segmentID { return "record was sealed for another segment (a moved record)" }
    if self.offset != offset { return Self.offsetMismatch(sealed: self.offset, found: offset) }
    if sequence != header.sequence { return "record's sequence number does not match its sealed key" }
    if flags != header.flags { return "record's batch flags do not match its sealed key" }
    if !constantTimeEqual(valueDigest, digest) { return "record's value was sealed for another record" }
    return nil
  }
  /// `mismatch(header:segmentID:offset:valueDigest:)`'s rule for a binding still encoded at
  /// the front of an opened key message `plaintext` and a value digest in place: no array for
  /// either. Prevents: two allocations on every get that checks a record read from disk.
  ///
  /// - Returns: why the record is not the one sealed for; `nil` when it is.
  static func mismatch(
    encoded plaintext: UnsafeRawBufferPointer, header: RecordHeader, segmentID: UInt32, offset: UInt64,
    valueDigest digest: UnsafeRawBufferPointer, shortTombstones: Bool
  ) -> String? {
    // A short binding is rare on this path (reads from disk are of puts); decoding it whole
    // costs one array, and keeps one rule for both layouts.
    if shortTombstones, plaintext.count > 0, plaintext[0] == CaskFormat.messageTagTombstone {
      guard let binding = decode(plaintext, shortTombstones: true) else { return "message is not a key message" }
      return binding.mismatch(header: header, segmentID: segmentID, offset: offset, valueDigest: Array(digest))
    }
    guard isLongBinding(plaintext, shortTombstones: shortTombstones) else { return "message is not a key message" }
    if plaintext[CaskFormat.bindingTypeOffset] != header.type {
      return "record type does not match its sealed key (a forged record)"
    }
    if loadLittleEndian(plaintext, at: CaskFormat.bindingSegmentOffset, as: UInt32.self) != segmentID {
      return "record was sealed for another segment (a moved record)"
    }
    let sealedOffset = loadLittleEndian(plaintext, at: CaskFormat.bindingOffsetOffset, as: UInt64.self)
    if sealedOffset != offset { return offsetMismatch(sealed: sealedOffset, found: offset) }
    if loadLittleEndian(plaintext, at: CaskFormat.bindingSequenceOffset, as: UInt64.self) != header.sequence {
      return "record's sequence number does not match its sealed key"
    }
    if plaintext[CaskFormat.bindingFlagsOffset] != header.flags {
      return "record's batch flags do not match its sealed key"
    }
    let sealedDigest = UnsafeRawBufferPointer(
      rebasing: plaintext[CaskFormat.bindingDigestOffset..<CaskFormat.keyBindingLength])
    if !constantTimeEqual(sealedDigest, digest) {
      return "record's value was sealed for another record"
    }
    return nil
  }
}

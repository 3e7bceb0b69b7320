import Foundation

/// The `MANIFEST` file of a version 3 store (Docs/FORMAT.md, "Manifest"): the set of segments
/// and their lengths, the last sequence number and a generation counter, sealed under the
/// data key. Rewritten atomically when a segment is sealed, after a compaction has put its
/// outputs in place (before its inputs go), at a clean close and at a writable open; open
/// checks the files against it, so a segment deleted, put back from an older copy, or cut
/// short after it was sealed is found without reading it.
///
/// ```
/// 0 magic "CCMANIFS"(8)   8 RNCryptor v3 key message under the data key, whose plaintext is:
///   tag 'M'(1) reserved(1) version(2) generation(8) last sequence(8) next segment id(4)
///   segment count(4) retired count(4) pending count(4)
///   segments: id(4) order base(4) order sub(4) flags(4) length(8)   (flags bit 0: active)
///   retired ids(4 each), pending ids(4 each)
/// ```
struct Manifest: Equatable {
  struct Entry: Equatable {
    var id: UInt32
    var order: SegmentOrder
    /// The segment being appended to: its file may have grown past `length` since.
    var isActive: Bool
    var length: UInt64
  }

  /// Counts every manifest this store wrote; never goes down.
  var generation: UInt64
  var lastSequence: UInt64
  /// Every segment number below this one had been handed out when the manifest was written.
  var nextSegmentID: UInt32
  var segments: [Entry]
  /// Inputs of a compaction: replaced, to be removed, never read; named until they are gone.
  var retired: [UInt32]
  /// Numbers of compaction outputs being written: such a file may be in place, unlisted,
  /// after a crash before the compaction's manifest.
  var pending: [UInt32]

  static let fixedLength = 40

  func encoded(cipher: RecordCipher) throws -> [UInt8] {
    var payload = ByteWriter(capacity: Self.fixedLength + segments.count * 24 + (retired.count + pending.count) * 4)
    payload.append(CaskFormat.messageTagManifest)
    payload.append(UInt8(0))
    payload.append(cipher.version)
    payload.append(generation)
    payload.append(lastSequence)
    payload.append(nextSegmentID)
    payload.append(UInt32(segments.count))
    payload.append(UInt32(retired.count))
    payload.append(UInt32(pending.count))
    for entry in segments {
      payload.append(entry.id)
      payload.append(entry.order.base)
      payload.append(entry.order.sub)
      payload.append(UInt32(entry.isActive ? 1 : 0))
      payload.append(entry.length)
    }
    for id in retired { payload.append(id) }
    for id in pending { payload.append(id) }
    return CaskFormat.manifestMagic + Array(try cipher.seal(Data(payload.bytes)))
  }

  /// Decrypts and parses a manifest file.
  ///
  /// - Throws: `CaskError.integrityViolation` when it does not authenticate or is malformed
  ///   (the manifest is rewritten whole, atomically: damage to it is never a torn write).
  static func decode(_ bytes: Data, cipher: RecordCipher) throws -> Manifest {
    let name = CaskFormat.manifestFileName
    let magicLength = CaskFormat.manifestMagic.count
    guard bytes.count > magicLength, bytes.prefix(magicLength).elementsEqual(CaskFormat.manifestMagic) else {
      throw CaskError.integrityViolation(file: name, reason: "not a manifest")
    }
    let plaintext: Data
    do {
      plaintext = try cipher.open(Data(bytes.dropFirst(magicLength)), file: name, offset: UInt64(magicLength))
    } catch CaskError.corrupt(_, _, let reason) {
      throw CaskError.integrityViolation(file: name, reason: "manifest does not authenticate (\(reason))")
    }
    let malformed = CaskError.integrityViolation(file: name, reason: "malformed manifest")
    return try plaintext.withUnsafeBytes { buffer in
      var reader = ByteReader(buffer)
      guard reader.readUInt8() == CaskFormat.messageTagManifest, reader.readUInt8() == 0,
        reader.readUInt16() == cipher.version, let generation = reader.readUInt64(),
        let lastSequence = reader.readUInt64(), let nextSegmentID = reader.readUInt32(),
        let count = reader.readUInt32(), let retiredCount = reader.readUInt32(),
        let pendingCount = reader.readUInt32(),
        UInt64(count) * 24 + (UInt64(retiredCount) + UInt64(pendingCount)) * 4 == UInt64(reader.remaining)
      else { throw malformed }
      var segments: [Entry] = []
      for _ in 0..<count {
        guard let id = reader.readUInt32(), let base = reader.readUInt32(), let sub = reader.readUInt32(),
          let flags = reader.readUInt32(), flags & ~1 == 0, let length = reader.readUInt64()
        else { throw malformed }
        segments.append(
          Entry(id: id, order: SegmentOrder(base: base, sub: sub), isActive: flags == 1, length: length))
      }
      var retired: [UInt32] = []
      for _ in 0..<retiredCount {
        guard let id = reader.readUInt32() else { throw malformed }
        retired.append(id)
      }
      var pending: [UInt32] = []
      for _ in 0..<pendingCount {
        guard let id = reader.readUInt32() else { throw malformed }
        pending.append(id)
      }
      return Manifest(
        generation: generation, lastSequence: lastSequence, nextSegmentID: nextSegmentID, segments: segments,
        retired: retired, pending: pending)
    }
  }
}

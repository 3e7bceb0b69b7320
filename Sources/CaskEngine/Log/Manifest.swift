import Foundation
import RNCryptorCodec

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
/// In a store with key epochs (header version 4) the version field says 4, each segment entry
/// ends with the segment's key epoch (4), and each pending id is followed by its epoch (4). A
/// version 5 store's says 5: the layout with epochs, and the store's identity (16) after the
/// pending count, so that the manifest of a copy sharing the data key is not taken for its own.
struct Manifest: Equatable {
  struct Entry: Equatable {
    var id: UInt32
    var order: SegmentOrder
    /// The segment being appended to: its file may have grown past `length` since.
    var isActive: Bool
    var length: UInt64
    /// The key epoch the segment's header must name (0 in a manifest without epochs).
    var epoch: UInt32 = 0
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
  /// The key epoch of each pending output (0 for those not named: a manifest without epochs).
  var pendingEpochs: [UInt32: UInt32] = [:]
  /// Whether the layout has the epochs (version 4, a store with key epochs).
  var hasEpochs = false
  /// Version 5: the identity of the store that wrote it (its header's).
  var identity: [UInt8]?

  static let fixedLength = 40

  /// The layout version: the store's records' version, 4 with epochs, 5 with an identity.
  func layoutVersion(cipher: RecordCipher) -> UInt16 {
    identity != nil ? CaskFormat.authenticatedVersion : hasEpochs ? CaskFormat.keyEpochsVersion : cipher.version
  }

  func encoded(cipher: RecordCipher) throws -> [UInt8] {
    let entryLength = hasEpochs ? CaskFormat.manifestEpochEntryLength : CaskFormat.manifestEntryLength
    let pendingLength = hasEpochs ? CaskFormat.manifestEpochPendingLength : CaskFormat.manifestIDLength
    var payload = ByteWriter(
      capacity: Self.fixedLength + segments.count * entryLength + retired.count * CaskFormat.manifestIDLength
        + pending.count * pendingLength)
    payload.append(CaskFormat.messageTagManifest)
    payload.append(UInt8(0))
    payload.append(layoutVersion(cipher: cipher))
    payload.append(generation)
    payload.append(lastSequence)
    payload.append(nextSegmentID)
    payload.append(UInt32(segments.count))
    payload.append(UInt32(retired.count))
    payload.append(UInt32(pending.count))
    if let identity { payload.append(contentsOf: identity) }
    for entry in segments {
      payload.append(entry.id)
      payload.append(entry.order.base)
      payload.append(entry.order.sub)
      payload.append(UInt32(entry.isActive ? 1 : 0))
      payload.append(entry.length)
      if hasEpochs { payload.append(entry.epoch) }
    }
    for id in retired { payload.append(id) }
    for id in pending {
      payload.append(id)
      if hasEpochs { payload.append(pendingEpochs[id] ?? 0) }
    }
    return CaskFormat.manifestMagic + Array(try cipher.seal(Data(payload.bytes)))
  }

  /// Decrypts and parses a manifest file under the ring's current key, or, when the ring pins
  /// one (a crash between the header that started the current epoch and the first manifest
  /// under its key), that exact manifest under its older key.
  ///
  /// - Throws: `CaskError.integrityViolation` when it does not authenticate, is malformed, or
  ///   (version 5) names another store's identity than the header's.
  static func decode(_ bytes: Data, ring: KeyRing) throws -> Manifest {
    let manifest: Manifest
    do {
      manifest = try decode(bytes, cipher: ring.current)
    } catch let error as CaskError {
      guard let pinned = ring.pinnedManifest, let older = ring.older[pinned.epoch],
        bytes.count >= CaskFormat.valueDigestLength,
        constantTimeEqual(Array(bytes.suffix(CaskFormat.valueDigestLength)), pinned.digest)
      else { throw error }
      manifest = try decode(bytes, cipher: older)
    }
    // Prevents: the manifest of a copy that shares the data key (a backup) standing in for
    // this store's, and an older layout's under a version 5 header.
    guard manifest.identity == ring.identity else {
      throw CaskError.integrityViolation(
        file: CaskFormat.manifestFileName, reason: "the manifest was written by another store or copy")
    }
    return manifest
  }

  /// Decrypts and parses a manifest file: the layout of the records' version, or, for version
  /// 3 records, the one with key epochs (version 4).
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
        let version = reader.readUInt16(),
        version == cipher.version
          || ((version == CaskFormat.keyEpochsVersion || version == CaskFormat.authenticatedVersion)
            && cipher.version == CaskFormat.boundRecordsVersion)
      else { throw malformed }
      let hasEpochs = version >= CaskFormat.keyEpochsVersion
      let entryLength = UInt64(hasEpochs ? CaskFormat.manifestEpochEntryLength : CaskFormat.manifestEntryLength)
      let pendingLength = UInt64(hasEpochs ? CaskFormat.manifestEpochPendingLength : CaskFormat.manifestIDLength)
      // A generation at the limit could never be superseded (the next manifest's would wrap):
      // no writer reaches it, so it is damage. Prevents: open trapping on the overflow.
      guard let generation = reader.readUInt64(), generation < UInt64.max,
        let lastSequence = reader.readUInt64(), let nextSegmentID = reader.readUInt32(),
        let count = reader.readUInt32(), let retiredCount = reader.readUInt32(),
        let pendingCount = reader.readUInt32(),
        version < CaskFormat.authenticatedVersion || reader.remaining >= CaskFormat.storeIdentityLength
      else { throw malformed }
      let identity =
        version == CaskFormat.authenticatedVersion
        ? reader.readBytes(CaskFormat.storeIdentityLength).map { Array($0) } : nil
      guard
        UInt64(count) * entryLength + UInt64(retiredCount) * UInt64(CaskFormat.manifestIDLength)
          + UInt64(pendingCount) * pendingLength
          == UInt64(reader.remaining)
      else { throw malformed }
      guard
        let lists = readLists(
          &reader, segments: count, retired: retiredCount, pending: pendingCount, hasEpochs: hasEpochs)
      else { throw malformed }
      let (segments, retired, pending, pendingEpochs) = lists
      return Manifest(
        generation: generation, lastSequence: lastSequence, nextSegmentID: nextSegmentID, segments: segments,
        retired: retired, pending: pending, pendingEpochs: pendingEpochs, hasEpochs: hasEpochs, identity: identity)
    }
  }

  /// Reads a manifest's lists after its fixed fields: the segment entries, the retired ids and
  /// the pending ids (each with its epoch when `hasEpochs`).
  ///
  /// - Returns: `nil` when an entry is cut short or sets a flag that does not exist.
  private static func readLists(
    _ reader: inout ByteReader, segments count: UInt32, retired retiredCount: UInt32, pending pendingCount: UInt32,
    hasEpochs: Bool
  ) -> (segments: [Entry], retired: [UInt32], pending: [UInt32], pendingEpochs: [UInt32: UInt32])? {
    var segments: [Entry] = []
    for _ in 0..<count {
      guard let id = reader.readUInt32(), let base = reader.readUInt32(), let sub = reader.readUInt32(),
        let flags = reader.readUInt32(), flags & ~1 == 0, let length = reader.readUInt64()
      else { return nil }
      var entry = Entry(id: id, order: SegmentOrder(base: base, sub: sub), isActive: flags == 1, length: length)
      if hasEpochs {
        guard let epoch = reader.readUInt32() else { return nil }
        entry.epoch = epoch
      }
      segments.append(entry)
    }
    var retired: [UInt32] = []
    for _ in 0..<retiredCount {
      guard let id = reader.readUInt32() else { return nil }
      retired.append(id)
    }
    var pending: [UInt32] = []
    var pendingEpochs: [UInt32: UInt32] = [:]
    for _ in 0..<pendingCount {
      guard let id = reader.readUInt32() else { return nil }
      pending.append(id)
      if hasEpochs {
        guard let epoch = reader.readUInt32() else { return nil }
        pendingEpochs[id] = epoch
      }
    }
    return (segments, retired, pending, pendingEpochs)
  }
}

import Foundation
import RNCryptorCodec

/// Reading one segment's index at open: its hint when the hint can be trusted, otherwise a
/// scan of its records (FORMAT.md, "Opening a store", step 6).
extension StoreOpener {
  /// Whether the last segment is appended to after open: an ordinary segment with room left.
  func appendsTo(_ segment: Segment, end: UInt64) -> Bool {
    !options.readOnly && segment.order.sub == 0
      && end < min(options.segmentSizeLimit, CaskFormat.maximumSegmentLength)
  }

  /// What the segment's hint claims it adds to each table of the index, unauthenticated
  /// (`HintPayload.claimedSizes`): `nil` without a readable grouped hint.
  func claimedHintSizes(for segment: Segment, length: UInt64, cipher: RecordCipher) -> HintSizes? {
    let hintPath = "\(path)/\(Segment.hintName(id: segment.id))"
    guard fileSystem.fileKind(hintPath) == .file, let file = try? fileSystem.open(hintPath, mode: .readOnly) else {
      return nil
    }
    defer { file.close() }
    // The counts bound the memory planned in proportion to the file's length: only a hint
    // `loadHint` would read may plan any (not longer than its segment allows, no hole in it).
    // Prevents: header-only segments with forged sparse hints sizing the index at gigabytes.
    guard let size = try? file.size(), size >= UInt64(HintPayload.headLength),
      size <= length + CaskFormat.hintOverheadBound, file.nextHole(from: 0, size: size) >= size
    else { return nil }
    var head = [UInt8](repeating: 0, count: Int(min(size, UInt64(HintPayload.sizingHeadLength))))
    guard let received = try? head.withUnsafeMutableBytes({ try file.readFully(into: $0, at: 0) }),
      received == head.count
    else { return nil }
    return head.withUnsafeBytes { HintPayload.claimedSizes(head: $0, fileLength: size, cipher: cipher) }
  }

  /// The segment's hint, if it authenticates, describes this segment and its exact length,
  /// and every entry lies inside the segment.
  func loadHint(for segment: Segment, length: UInt64, cipher: RecordCipher) -> HintPayload? {
    let hintPath = "\(path)/\(Segment.hintName(id: segment.id))"
    guard fileSystem.fileKind(hintPath) == .file,
      let file = try? fileSystem.open(hintPath, mode: .readOnly)
    else { return nil }
    defer { file.close() }
    // Read into a mapped buffer, returned to the system afterwards (see `TransientBuffer`);
    // only a hint that could be its segment's (`readWhole`'s rule: no longer than its segment
    // allows, no hole), so that a planted sparse hint costs nothing to pass over.
    guard let size = try? file.size(), size <= length + CaskFormat.hintOverheadBound,
      file.nextHole(from: 0, size: size) >= size,
      let buffer = try? TransientBuffer(count: Int(size), purpose: hintPath),
      let received = try? file.readFully(into: buffer.bytes, at: 0), received == Int(size),
      let hint = try? HintPayload(
        file: UnsafeRawBufferPointer(buffer.bytes), cipher: cipher, path: hintPath),
      hint.segmentID == segment.id,
      hint.segmentLength == length || (!options.checksHintLength && hint.segmentLength < length)
    else { return nil }
    // Every entry must lie inside the segment, or the hint is not trusted.
    var inside = true
    try? hint.forEachEntry { _, offset, entryLength, _ in
      if UInt64(offset) < segment.recordsStart || UInt64(offset) + UInt64(entryLength) > length {
        inside = false
      }
    }
    return inside ? hint : nil
  }

  struct Scanned {
    var entries: [HintEntry]
    var maxSequence: UInt64
    var outcome: ScanOutcome
    /// Damage that open does not cut away: a damaged region inside, a batch dropped because a
    /// key did not authenticate, records after a lost batch beginning.
    var keepsDamage: Bool
  }

  /// Reads every record of a segment, decrypting keys only.
  func scan(
    _ segment: Segment, length: UInt64, from start: UInt64? = nil,
    allowsReserved: Bool, cipher: RecordCipher, report: inout RecoveryReport
  ) throws -> Scanned {
    var entries: [HintEntry] = []
    var maxSequence: UInt64 = 0
    var scanner = SegmentScanner(
      file: segment.file, start: start ?? segment.recordsStart, length: length, allowsReserved: allowsReserved)
    var undecryptable: [CorruptRegion] = []
    let name = Segment.fileName(id: segment.id)
    let outcome = try scanner.scan { batch in
      var decoded: [HintEntry] = []
      for record in batch {
        // A key that does not authenticate, or that `put` could not have written, makes its
        // whole batch unusable.
        func drop(_ reason: String) {
          undecryptable.append(
            CorruptRegion(
              file: name, offset: record.offset, length: UInt64(record.header.totalLength),
              reason: "\(reason); its batch was dropped"))
          report.droppedRecords += batch.count
        }
        guard let bytes = try? cipher.open(record.keyMessage, file: name, offset: record.offset) else {
          drop("record does not authenticate")
          return
        }
        if let problem = cipher.bindingProblem(bytes, of: record, inSegment: segment.id) {
          drop(problem)
          report.integrityViolations.append(
            CorruptRegion(
              file: name, offset: record.offset, length: UInt64(record.header.totalLength), reason: problem))
          return
        }
        let opened: (key: String, attached: [UInt8])
        do {
          opened = try cipher.boundKeyAndAttachments(bytes, of: record, inSegment: segment.id, file: name)
        } catch CaskError.corrupt(_, _, let reason) {
          drop(reason)
          return
        }
        decoded.append(
          HintEntry(
            isDelete: record.header.isDelete, offset: UInt32(record.offset),
            length: UInt32(record.header.totalLength), key: opened.key, attached: opened.attached))
        maxSequence = max(maxSequence, record.header.sequence)
      }
      entries.append(contentsOf: decoded)
    }
    report.corruptRegions.append(contentsOf: outcome.corruptions + undecryptable)
    report.droppedRecords += outcome.droppedRecords
    return Scanned(
      entries: entries, maxSequence: maxSequence, outcome: outcome,
      keepsDamage: !outcome.corruptions.isEmpty || !undecryptable.isEmpty || outcome.orphanRecords > 0)
  }
}

import Foundation

/// What `verify()` found.
public struct VerifyReport: Sendable, Equatable {
  /// Segment files read.
  public var segmentsChecked = 0
  /// Records whose checksum, key and value all authenticated.
  public var recordsChecked = 0
  /// Every damaged place: file, offset, what was wrong.
  public var damage: [CorruptRegion] = []

  /// Whether every byte of every record authenticated.
  public var isClean: Bool { damage.isEmpty }
}

extension CaskStore {
  /// Reads every record of every segment, checks its CRC and authenticates (decrypts) its key
  /// and value, checks each hint file and, in a version 3 store, compares the manifest with
  /// the segment files as they are now. Nothing is changed.
  ///
  /// - Returns: a report listing each damaged file and offset; no key or value appears in it.
  /// - Complexity: O(total bytes) of reading and decryption.
  public func verify() throws -> VerifyReport {
    try userCode.refuse("verify")
    let (segments, unreadable, violations) = try state.withLock { state -> ([Segment], [String], [CorruptRegion]) in
      try state.throwIfClosed()
      return (
        state.segments.values.sorted { $0.order < $1.order }, state.recovery.unreadableSegments,
        state.recovery.integrityViolations
      )
    }
    // Appends that land after this point are not part of the check.
    let activeEnd = writer.withLock { writer in writer.active.map { ($0.segment.id, $0.end) } }
    var report = VerifyReport()
    // What open found against the manifest (a store opened for salvage), and what the
    // manifest and the files say now: a file changed since open is found here too.
    report.damage += violations.filter { region in
      !region.file.hasSuffix(CaskFormat.segmentExtension) || region.length == 0
    }
    for region in try manifestDisagreements() where !report.damage.contains(region) {
      report.damage.append(region)
    }
    for segment in segments {
      let length: UInt64
      if let (activeID, end) = activeEnd, activeID == segment.id {
        length = end
      } else {
        length = min(try segment.file.size(), CaskFormat.maximumSegmentLength)
      }
      // Zeros after the last record of the last segment are space a writer reserved (a
      // read-only open keeps them).
      let allowsReserved = segment.id == segments.last?.id && segment.order.sub == 0
      try verifyRecords(of: segment, length: length, allowsReserved: allowsReserved, into: &report)
      try verifyHint(of: segment, into: &report)
    }
    // Attached keys must point at the live record of an owner (FORMAT.md, "Version 5: attached
    // keys"); one that does not would answer for a record the store no longer has.
    let stray = state.withLock { $0.directory.strayAttachedKeys() }
    if stray > 0 {
      report.damage.append(
        CorruptRegion(
          file: CaskFormat.headerFileName, offset: 0, length: 0,
          reason: "\(stray) attached keys point at no live record of an owner"))
    }
    // Segments that open could not use at all (damaged header) and that are still there.
    for name in unreadable where fileSystem.fileKind("\(path)/\(name)") == .file {
      report.damage.append(
        CorruptRegion(file: name, offset: 0, length: 0, reason: "segment header is damaged; the segment is not used"))
    }
    return report
  }

  /// Scans the first `length` bytes of `segment`'s records, authenticating each record's key
  /// and value, and adds what it checked and found damaged to `report`.
  private func verifyRecords(
    of segment: Segment, length: UInt64, allowsReserved: Bool, into report: inout VerifyReport
  ) throws {
    let name = Segment.fileName(id: segment.id)
    var scanner = SegmentScanner(
      file: segment.file, start: segment.recordsStart, length: length, allowsReserved: allowsReserved)
    var damage: [CorruptRegion] = []
    var checked = 0
    let outcome = try scanner.scan { batch in
      for record in batch {
        do {
          try authenticate(record, in: segment)
          checked += 1
        } catch CaskError.corrupt(_, _, let reason) {
          damage.append(
            CorruptRegion(file: name, offset: record.offset, length: UInt64(record.header.totalLength), reason: reason))
        }
      }
    }
    report.segmentsChecked += 1
    report.recordsChecked += checked
    report.damage += outcome.corruptions + damage
    if outcome.hasTornTail {
      report.damage.append(
        CorruptRegion(
          file: name, offset: outcome.validEnd, length: outcome.tailBytes, reason: "incomplete records at the end"))
    }
    if outcome.droppedRecords > 0 && !outcome.hasTornTail && outcome.corruptions.isEmpty {
      report.damage.append(
        CorruptRegion(file: name, offset: outcome.validEnd, length: 0, reason: "batch without its commit marker"))
    }
  }

  /// Opens `record`'s key message and, for a put, its value message.
  ///
  /// - Throws: `CaskError.corrupt` when either does not authenticate.
  private func authenticate(_ record: ScannedRecord, in segment: Segment) throws {
    let name = Segment.fileName(id: segment.id)
    let key = try segment.cipher.openKey(of: record, inSegment: segment.id, file: name)
    guard !record.header.isDelete else { return }
    let value = try segment.file.read(
      count: Int(record.header.valueLength),
      at: record.offset + UInt64(CaskFormat.recordHeaderLength) + UInt64(record.header.keyLength))
    _ = try segment.cipher.openValue(value, forKey: key, file: name, offset: record.offset)
  }

  /// Checks `segment`'s hint file, if it has one, as open would read it: a hint that cannot
  /// be opened, does not authenticate, or describes another segment or a longer one is damage.
  private func verifyHint(of segment: Segment, into report: inout VerifyReport) throws {
    let hintName = Segment.hintName(id: segment.id)
    let hintPath = "\(path)/\(hintName)"
    guard fileSystem.fileKind(hintPath) == .file else { return }
    let file: any StorageFile
    do {
      file = try fileSystem.open(hintPath, mode: .readOnly)
    } catch CaskError.io(_, _, let code) where code == ENOENT {
      // A compaction running beside verify removed the segment it replaced, hint first,
      // after the check above: nothing to check.
      return
    } catch CaskError.io(_, _, let code) {
      // A link or a FIFO under the hint's name (refused: ELOOP, EINVAL), or a hint that
      // cannot be opened: open passes over it and scans the segment, so it is reported,
      // not thrown.
      report.damage.append(
        CorruptRegion(
          file: hintName, offset: 0, length: 0,
          reason: "hint file cannot be opened (\(String(cString: strerror(code)))); open scans the segment instead"))
      return
    }
    defer { file.close() }
    // Capped as open caps it: the hint open writes for a longer file states that length.
    let segmentLength = min(try segment.file.size(), CaskFormat.maximumSegmentLength)
    do {
      // Never longer than its segment allows, never sparse (open passes over such a hint).
      let bytes = try file.readWhole(limit: segmentLength + CaskFormat.hintOverheadBound)
      let hint = try HintFile.decode(bytes, cipher: segment.cipher, path: hintPath)
      // An authentic hint of another segment, or of another length, is not used by open. One
      // of this segment stating a shorter length is the stale hint of a segment resumed after
      // a clean close: its removal is queued at the first append, and a crash may keep it
      // (Docs/FORMAT.md, section 6). Open never uses it either; it is not damage.
      let stale = hint.segmentID == segment.id && hint.segmentLength < segmentLength
      if !stale && (hint.segmentID != segment.id || hint.segmentLength != segmentLength) {
        report.damage.append(
          CorruptRegion(file: hintName, offset: 0, length: 0, reason: "hint does not describe its segment"))
      }
    } catch CaskError.corrupt(_, let offset, let reason) {
      report.damage.append(CorruptRegion(file: hintName, offset: offset, length: 0, reason: reason))
    }
  }
}

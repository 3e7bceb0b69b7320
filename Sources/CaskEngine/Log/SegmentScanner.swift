import Foundation

/// A record found by a scan: where it is, its header and its (still encrypted) key message.
struct ScannedRecord {
  var offset: UInt64
  var header: RecordHeader
  var keyMessage: Data
  /// The value message's last 32 bytes (its HMAC), or zeros for a delete: what a version 3
  /// key message's binding names.
  var valueDigest: [UInt8]
}

/// What a scan of one segment found besides good records.
struct ScanOutcome {
  /// End of the last complete batch: where appending may resume.
  var validEnd: UInt64
  /// A damaged region followed by more valid records: skipped, reported, not cut.
  var corruptions: [CorruptRegion] = []
  /// Records of batches that were incomplete or damaged, and so not applied.
  var droppedRecords = 0
  /// Of those, the records after a batch's lost beginning, which no region reports.
  var orphanRecords = 0
  /// Whether nothing valid follows `validEnd` (a torn or half-written tail).
  var hasTornTail: Bool { tailBytes > 0 }
  /// Bytes after `validEnd` with no valid record after them.
  var tailBytes: UInt64 = 0
  /// Zero bytes reserved ahead of the writer that no record reached (the end of the last
  /// segment only; Docs/FORMAT.md, "Reserved space"). Not damage: `tailBytes` is then 0.
  var reservedBytes: UInt64 = 0
}

/// A damaged stretch of a segment that was skipped.
public struct CorruptRegion: Sendable, Equatable {
  /// The segment file's name.
  public var file: String
  /// Offset of the first damaged byte.
  public var offset: UInt64
  /// Bytes skipped before the next valid record.
  public var length: UInt64
  /// What was wrong, without any content.
  public var reason: String
}

/// Reads the records of a segment in order, in large chunks, checking each record's CRC and
/// handing over whole batches only (a batch without its commit marker is never applied).
struct SegmentScanner {
  private let file: any StorageFile
  /// Where the first record starts: after the segment's header (and link), or a batch
  /// boundary that a checkpoint covers up to (Docs/FORMAT.md, section 18).
  private let start: UInt64
  private let length: UInt64
  private let name: String
  private var window = Data()
  private var windowStart: UInt64 = 0
  /// Bytes read ahead at a time; tests make it small to move the window's edges about.
  private let chunk: Int

  /// Whether a tail of zero bytes is space the writer reserved (true for the last segment
  /// only) rather than damage.
  private let allowsReserved: Bool
  init(
    file: any StorageFile, start: UInt64 = UInt64(CaskFormat.segmentHeaderLength), length: UInt64,
    allowsReserved: Bool = false, readAhead: Int = 1 << 20
  ) {
    self.file = file
    self.start = start
    self.length = length
    self.allowsReserved = allowsReserved
    self.chunk = max(readAhead, CaskFormat.recordHeaderLength)
    self.name = String(file.path.split(separator: "/").last ?? "")
  }

  /// Scans from `start` (the end of the segment header unless told) to the end of the file.
  ///
  /// A batch is handed over when its commit marker is read. One that was damaged after it
  /// was written (Docs/FORMAT.md, sections 5.3 and 9) is handed over too, without its damaged
  /// records, when its commit marker is there and the damage does not look like a write that
  /// never reached the disk (a whole sector of zeros, which a crash leaves where pages were
  /// lost: such a batch may never have been acknowledged, and applying part of it would
  /// break its atomicity, also once its segment is sealed); every other batch with damage in
  /// it is dropped.
  ///
  /// - Parameter commit: called with the records of each complete batch, in order.
  mutating func scan(commit: ([ScannedRecord]) throws -> Void) throws -> ScanOutcome {
    var position = start
    var outcome = ScanOutcome(validEnd: position)
    var batch = OpenBatch()
    while position < length {
      if let record = try record(at: position) {
        let recordEnd = position + UInt64(record.header.totalLength)
        if record.header.startsBatch && batch.isOpen {
          // The open batch never reached its commit marker, or lost it to damage: in a sealed
          // segment, which was synced whole before it was sealed, it had committed.
          try end(&batch, committed: keepsUnmarked(batch), before: position, into: &outcome, commit)
        }
        if !record.header.startsBatch && !batch.isOpen {
          // The rest of a batch whose beginning was lost: never applied on its own.
          outcome.droppedRecords += 1
          outcome.orphanRecords += 1
          position = recordEnd
          outcome.validEnd = position
          continue
        }
        batch.records.append(record)
        position = recordEnd
        if record.header.endsBatch {
          try end(&batch, committed: !batch.looksUnwritten, before: position, into: &outcome, commit)
          outcome.validEnd = position
        }
        continue
      }
      if allowsReserved, !batch.isOpen, try isZero(from: position) {
        outcome.reservedBytes = length - position
        outcome.validEnd = position
        return outcome
      }
      guard let resume = try resynchronize(after: position) else {
        // Nothing valid follows. In a sealed segment a batch open here was synced whole:
        // its damaged end is damage, not a torn write.
        if !allowsReserved, !batch.records.isEmpty {
          batch.damage.append((position, length - position))
          if try holdsZeroSector(from: position, to: length) { batch.looksUnwritten = true }
          position = length
          outcome.validEnd = position
        }
        break
      }
      batch.damage.append((position, resume - position))
      if try holdsZeroSector(from: position, to: resume) { batch.looksUnwritten = true }
      position = resume
      outcome.validEnd = position
    }
    if !batch.damage.isEmpty {
      // Damage, then records of its batch and no commit marker before the end.
      try end(&batch, committed: keepsUnmarked(batch), before: position, into: &outcome, commit)
    } else if let first = batch.records.first {
      // A batch still open at the end of the file was being written when the writer stopped.
      outcome.validEnd = first.offset
      outcome.droppedRecords += batch.records.count
    }
    outcome.tailBytes = length - outcome.validEnd
    return outcome
  }

  /// The batch being read: its intact records and the damaged stretches among them.
  private struct OpenBatch {
    var records: [ScannedRecord] = []
    var damage: [(offset: UInt64, length: UInt64)] = []
    /// Whether a damaged stretch holds a whole zero sector: what a write lost in a crash
    /// leaves, rather than damage to bytes that were written.
    var looksUnwritten = false

    var isOpen: Bool { !records.isEmpty || !damage.isEmpty }
    var start: UInt64? { [records.first?.offset, damage.first?.offset].compactMap { $0 }.min() }
  }

  /// Whether a damaged batch whose commit marker is not there is kept all the same: in a
  /// sealed segment (every segment but the last, which alone can hold a write a crash tore),
  /// unless the damage looks like a lost write.
  private func keepsUnmarked(_ batch: OpenBatch) -> Bool {
    !allowsReserved && !batch.damage.isEmpty && !batch.looksUnwritten && !batch.records.isEmpty
  }

  /// Hands `batch` over when it `committed`, then closes it.
  private func end(
    _ batch: inout OpenBatch, committed: Bool, before position: UInt64, into outcome: inout ScanOutcome,
    _ commit: ([ScannedRecord]) throws -> Void
  ) throws {
    if committed { try commit(batch.records) }
    close(&batch, dropping: !committed, before: position, into: &outcome)
  }

  /// Ends `batch`, reporting its damage: as regions of a batch that was kept (`dropping`
  /// false), or as one region from its first byte to `end` for a batch that was dropped.
  private func close(_ batch: inout OpenBatch, dropping: Bool, before end: UInt64, into outcome: inout ScanOutcome) {
    defer { batch = OpenBatch() }
    guard let start = batch.start, !batch.damage.isEmpty || dropping else { return }
    if !dropping {
      for stretch in batch.damage {
        outcome.corruptions.append(
          CorruptRegion(
            file: name, offset: stretch.offset, length: stretch.length,
            reason: "damaged record inside a committed batch; its other records were kept"))
      }
      return
    }
    if batch.records.isEmpty {
      // Damage between batches (or a whole batch of it): nothing of a batch to drop.
      for stretch in batch.damage {
        outcome.corruptions.append(
          CorruptRegion(file: name, offset: stretch.offset, length: stretch.length, reason: "damaged record"))
      }
      return
    }
    let reason =
      batch.damage.isEmpty
      ? "batch without its commit marker; the batch was dropped"
      : "damaged record inside a batch that did not finish; the batch was dropped"
    let last = batch.records.last.map { $0.offset + UInt64($0.header.totalLength) } ?? start
    let stop = batch.damage.isEmpty ? end : max(last, batch.damage.last.map { $0.offset + $0.length } ?? start)
    outcome.corruptions.append(CorruptRegion(file: name, offset: start, length: stop - start, reason: reason))
    outcome.droppedRecords += batch.records.count
  }

  /// Whether `[from, to)` holds a 512-byte block of zeros at a 512-byte boundary, or zeros
  /// from `from` to the next boundary or from the last boundary to `to`: the part of a sector
  /// a torn write did not reach when it started or ended inside that sector (the rest of the
  /// sector holds the bytes before the write, or the record after it).
  private mutating func holdsZeroSector(from: UInt64, to: UInt64) throws -> Bool {
    // A hole is whole blocks of zeros, found without reading them.
    if file.nextHole(from: from) < to { return true }
    let sector = UInt64(512)
    let head = (from + sector - 1) / sector * sector
    if head != from, head <= to {
      let bytes = try bytes(at: from, count: Int(head - from))
      if bytes.count == Int(head - from) && bytes.allSatisfy({ $0 == 0 }) { return true }
    }
    let tail = to / sector * sector
    if tail != to, tail >= from {
      let bytes = try bytes(at: tail, count: Int(to - tail))
      if bytes.count == Int(to - tail) && bytes.allSatisfy({ $0 == 0 }) { return true }
    }
    var block = head
    while block + sector <= to {
      let bytes = try bytes(at: block, count: Int(sector))
      if bytes.count == Int(sector) && bytes.allSatisfy({ $0 == 0 }) { return true }
      block += sector
    }
    return false
  }

  /// The record at `offset` if its header is plausible, it fits in the file and its CRC matches.
  private mutating func record(at offset: UInt64) throws -> ScannedRecord? {
    guard length - offset >= UInt64(CaskFormat.recordHeaderLength) else { return nil }
    let headerBytes = try bytes(at: offset, count: CaskFormat.recordHeaderLength)
    guard let header = headerBytes.withUnsafeBytes({ RecordHeader.parse($0) }),
      UInt64(header.totalLength) <= length - offset
    else { return nil }
    // A record is stored bytes, never a hole (its messages are ciphertext): a header whose
    // length reaches into one (only the CRC vouches for it) is not read, so a planted sparse
    // segment costs neither the memory nor the reading of the length it claims.
    if header.totalLength > chunk, file.nextHole(from: offset) < offset + UInt64(header.totalLength) { return nil }
    let whole = try bytes(at: offset, count: header.totalLength)
    guard whole.withUnsafeBytes({ RecordHeader.checksumMatches($0) }) else { return nil }
    let keyStart = whole.startIndex + CaskFormat.recordHeaderLength
    let valueStart = keyStart + Int(header.keyLength)
    let digest = whole.withUnsafeBytes {
      RecordBinding.digest(ofValueMessage: UnsafeRawBufferPointer(rebasing: $0[(valueStart - whole.startIndex)...]))
    }
    return ScannedRecord(
      offset: offset, header: header, keyMessage: Data(whole[keyStart..<valueStart]), valueDigest: digest)
  }

  /// Whether every byte from `offset` to the end of the file is zero.
  private mutating func isZero(from offset: UInt64) throws -> Bool {
    var position = offset
    while position < length {
      // Holes read as zeros: only the stored bytes are read. Prevents: minutes of reading a
      // planted sparse tail.
      position = max(position, file.nextData(from: position))
      guard position < length else { break }
      let count = Int(min(UInt64(chunk), length - position))
      let bytes = try bytes(at: position, count: count)
      guard !bytes.isEmpty, bytes.allSatisfy({ $0 == 0 }) else { return false }
      position += UInt64(bytes.count)
    }
    return true
  }

  /// The next offset after `offset` holding a valid record, or `nil` if there is none.
  ///
  /// Almost every offset of a damaged stretch fails the header's plausibility checks (type,
  /// flags, reserved bits), so those are tested in place in the read-ahead window, without a
  /// slice or a CRC each; only a plausible header costs a `record(at:)`.
  private mutating func resynchronize(after offset: UInt64) throws -> UInt64? {
    let headerLength = UInt64(CaskFormat.recordHeaderLength)
    var candidate = offset + 1
    while candidate + headerLength <= length {
      if !windowHolds(candidate, count: CaskFormat.recordHeaderLength) {
        // No header starts in a hole (its type byte would be 0) except in its last bytes,
        // whose header ends in the data after it: the search goes on from there, so that its
        // work is proportional to the bytes stored, not to the length a sparse file claims.
        let data = file.nextData(from: candidate)
        if data > candidate + headerLength { candidate = data - headerLength + 1 }
        guard candidate + headerLength <= length else { return nil }
        try loadWindow(at: candidate)
      }
      let start = windowStart
      let end = start + UInt64(window.count)
      // A read that came back short (the file shrank under the scan): nothing more to find.
      guard candidate + headerLength <= end else { return nil }
      let plausible: UInt64? = window.withUnsafeBytes { buffer in
        var position = candidate
        while position + headerLength <= end {
          let index = Int(position - start)
          let header = UnsafeRawBufferPointer(rebasing: buffer[index..<index + CaskFormat.recordHeaderLength])
          if RecordHeader.parse(header) != nil { return position }
          position += 1
        }
        return nil
      }
      guard let plausible else {
        // No plausible header starts in the window: go on from the first offset whose header
        // it does not hold whole.
        candidate = end - headerLength + 1
        continue
      }
      if try record(at: plausible) != nil { return plausible }
      candidate = plausible + 1
    }
    return nil
  }

  /// `count` bytes at `offset`, served from the read-ahead window (reads of a window or more
  /// go straight to the file).
  private mutating func bytes(at offset: UInt64, count: Int) throws -> Data {
    if !windowHolds(offset, count: count) {
      if count >= chunk { return try file.read(upTo: count, at: offset) }
      try loadWindow(at: offset)
    }
    let start = window.startIndex + Int(offset - windowStart)
    let available = min(count, window.endIndex - start)
    return window[start..<start + available]
  }

  private func windowHolds(_ offset: UInt64, count: Int) -> Bool {
    offset >= windowStart && offset + UInt64(count) <= windowStart + UInt64(window.count)
  }

  /// Reads up to `chunk` bytes from `offset` into the window.
  private mutating func loadWindow(at offset: UInt64) throws {
    windowStart = offset
    window = try file.read(upTo: Int(min(UInt64(chunk), length - offset)), at: offset)
  }
}

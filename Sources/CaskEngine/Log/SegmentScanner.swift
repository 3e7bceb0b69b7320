import Foundation

/// A record found by a scan: where it is, its header and its (still encrypted) key message.
struct ScannedRecord {
  var offset: UInt64
  var header: RecordHeader
  var keyMessage: Data
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
  private let length: UInt64
  private let name: String
  private var window = Data()
  private var windowStart: UInt64 = 0
  /// Bytes read ahead at a time; tests make it small to move the window's edges about.
  private let chunk: Int

  /// Whether a tail of zero bytes is space the writer reserved (true for the last segment
  /// only) rather than damage.
  private let allowsReserved: Bool

  init(file: any StorageFile, length: UInt64, allowsReserved: Bool = false, readAhead: Int = 1 << 20) {
    self.file = file
    self.length = length
    self.allowsReserved = allowsReserved
    self.chunk = max(readAhead, CaskFormat.recordHeaderLength)
    self.name = String(file.path.split(separator: "/").last ?? "")
  }

  /// Scans from the end of the segment header to the end of the file.
  ///
  /// - Parameter commit: called with the records of each complete batch, in order.
  mutating func scan(commit: ([ScannedRecord]) throws -> Void) throws -> ScanOutcome {
    var position = UInt64(CaskFormat.segmentHeaderLength)
    var outcome = ScanOutcome(validEnd: position)
    var pending: [ScannedRecord] = []
    while position < length {
      if let record = try record(at: position) {
        let recordEnd = position + UInt64(record.header.totalLength)
        if record.header.startsBatch && !pending.isEmpty {
          // The open batch never reached its commit marker: a record of it was lost.
          outcome.corruptions.append(
            CorruptRegion(
              file: name, offset: pending[0].offset, length: position - pending[0].offset,
              reason: "batch without its commit marker; the batch was dropped"))
          outcome.droppedRecords += pending.count
          pending.removeAll(keepingCapacity: true)
        }
        if !record.header.startsBatch && pending.isEmpty {
          // The rest of a batch whose beginning was damaged: never applied on its own.
          outcome.droppedRecords += 1
          outcome.orphanRecords += 1
          position = recordEnd
          outcome.validEnd = position
          continue
        }
        pending.append(record)
        position = recordEnd
        if record.header.endsBatch {
          try commit(pending)
          pending.removeAll(keepingCapacity: true)
          outcome.validEnd = position
        }
        continue
      }
      if allowsReserved, pending.isEmpty, try isZero(from: position) {
        outcome.reservedBytes = length - position
        outcome.validEnd = position
        return outcome
      }
      guard let resume = try resynchronize(after: position) else { break }
      let start = pending.first?.offset ?? position
      outcome.corruptions.append(
        CorruptRegion(
          file: name, offset: start, length: resume - start,
          reason: pending.isEmpty ? "damaged record" : "damaged record inside a batch; the batch was dropped"))
      outcome.droppedRecords += pending.count
      pending.removeAll(keepingCapacity: true)
      position = resume
      outcome.validEnd = position
    }
    // A batch still open at the end of the file was being written when the writer stopped.
    if let first = pending.first { outcome.validEnd = first.offset }
    outcome.droppedRecords += pending.count
    outcome.tailBytes = length - outcome.validEnd
    return outcome
  }

  /// The record at `offset` if its header is plausible, it fits in the file and its CRC matches.
  private mutating func record(at offset: UInt64) throws -> ScannedRecord? {
    guard length - offset >= UInt64(CaskFormat.recordHeaderLength) else { return nil }
    let headerBytes = try bytes(at: offset, count: CaskFormat.recordHeaderLength)
    guard let header = headerBytes.withUnsafeBytes({ RecordHeader.parse($0) }),
      UInt64(header.totalLength) <= length - offset
    else { return nil }
    let whole = try bytes(at: offset, count: header.totalLength)
    guard whole.withUnsafeBytes({ RecordHeader.checksumMatches($0) }) else { return nil }
    let keyStart = whole.startIndex + CaskFormat.recordHeaderLength
    return ScannedRecord(
      offset: offset, header: header, keyMessage: Data(whole[keyStart..<keyStart + Int(header.keyLength)]))
  }

  /// Whether every byte from `offset` to the end of the file is zero.
  private mutating func isZero(from offset: UInt64) throws -> Bool {
    var position = offset
    while position < length {
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
      if !windowHolds(candidate, count: CaskFormat.recordHeaderLength) { try loadWindow(at: candidate) }
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

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
  /// and value, and checks each hint file. Nothing is changed.
  ///
  /// - Returns: a report listing each damaged file and offset; no key or value appears in it.
  /// - Complexity: O(total bytes) of reading and decryption.
  public func verify() throws -> VerifyReport {
    let segments = try state.withLock { state -> [Segment] in
      guard !state.closed else { throw CaskError.closed }
      return state.segments.values.sorted { $0.order < $1.order }
    }
    // Appends that land after this point are not part of the check.
    let activeEnd = writer.withLock { writer in writer.active.map { ($0.segment.id, $0.end) } }
    var report = VerifyReport()
    for segment in segments {
      let name = Segment.fileName(id: segment.id)
      let length: UInt64
      if let (activeID, end) = activeEnd, activeID == segment.id {
        length = end
      } else {
        length = try segment.file.size()
      }
      var scanner = SegmentScanner(file: segment.file, length: length)
      var damage: [CorruptRegion] = []
      var checked = 0
      let outcome = try scanner.scan { batch in
        for record in batch {
          do {
            _ = try cipher.openKey(record.keyMessage, file: name, offset: record.offset)
            if !record.header.isDelete {
              let value = try segment.file.read(
                count: Int(record.header.valueLength),
                at: record.offset + UInt64(CaskFormat.recordHeaderLength) + UInt64(record.header.keyLength))
              _ = try cipher.open(value, file: name, offset: record.offset)
            }
            checked += 1
          } catch CaskError.corrupt(_, _, let reason) {
            damage.append(
              CorruptRegion(
                file: name, offset: record.offset, length: UInt64(record.header.totalLength), reason: reason))
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
      let hintPath = "\(path)/\(Segment.hintName(id: segment.id))"
      if fileSystem.fileKind(hintPath) == .file {
        let file = try fileSystem.open(hintPath, mode: .readOnly)
        defer { file.close() }
        let bytes = try file.read(count: Int(try file.size()), at: 0)
        do {
          _ = try HintFile.decode(bytes, cipher: cipher, path: hintPath)
        } catch CaskError.corrupt(_, let offset, let reason) {
          report.damage.append(
            CorruptRegion(file: Segment.hintName(id: segment.id), offset: offset, length: 0, reason: reason))
        }
      }
    }
    return report
  }
}

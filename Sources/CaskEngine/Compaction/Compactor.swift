import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// What one compaction did.
public struct CompactionReport: Sendable, Equatable {
  /// Segments replaced.
  public var inputSegments: Int
  /// Segments written.
  public var outputSegments: Int
  /// Live records copied (without decrypting them).
  public var recordsCopied: Int
  /// Bytes of the replaced segments.
  public var bytesBefore: UInt64
  /// Bytes of the new segments.
  public var bytesAfter: UInt64
  /// Live records that were damaged and so not copied: their keys are gone.
  public var damagedRecords: [CorruptRegion]
}

extension CaskStore {
  /// Rewrites every sealed segment into new ones holding only live records, then removes the
  /// old ones. Records are copied as they are, still encrypted: nothing is decrypted.
  ///
  /// Readers and writers keep working throughout: the index lock is taken only for short
  /// stretches, writes go to a fresh segment, and a reader that looked up an old segment reads
  /// on from it (its file is unlinked, but stays open until the last reader lets go).
  ///
  /// Crash safety: outputs are written under temporary names, synced, and renamed into place
  /// before any input is removed; they sort after their inputs and before every newer segment
  /// (`SegmentOrder`), so with or without the inputs the store opens to the same contents.
  ///
  /// - Returns: what was done, or `nil` if there was nothing to compact.
  /// - Throws: `.readOnly`, `.closed`, `.io`. A failed compaction leaves the store's contents
  ///   as they were; if removing its partial output fails too, the store refuses writes until
  ///   it is reopened (open then sees every file).
  /// - Complexity: O(live bytes) of I/O, O(live keys) of short index lookups.
  @discardableResult
  public func compact() throws -> CompactionReport? {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("compact")
    return try compactionLock.run { try runCompaction() }
  }

  /// Waits for a running compaction to finish.
  func waitForCompaction() {
    compactionLock.run {}
  }

  private struct CopiedRecord {
    var key: IndexKey
    var from: RecordLocation
    var to: RecordLocation
  }

  private struct OutputSegment {
    var segment: Segment
    var temporaryPath: String
    var finalPath: String
    var end: UInt64
    var hints: [HintEntry]
    var maxSequence: UInt64
  }

  private func runCompaction() throws -> CompactionReport? {
    // 1. Seal the segment being written, so that every existing segment is an input.
    let inputs = try writer.withLock { writer -> [Segment] in
      if writer.closed { throw CaskError.closed }
      if let failure = writer.failure { throw failure }
      if let active = writer.active { try seal(active, writer: &writer) }
      return state.withLock { Array($0.segments.values) }.sorted { $0.order < $1.order }
    }
    guard let last = inputs.last, !(inputs.count == 1 && state.withLock({ $0.directory.deadBytes == 0 })) else {
      return nil
    }
    var outputs: [OutputSegment] = []
    var copied: [CopiedRecord] = []
    var bytesBefore: UInt64 = 0
    var damaged: [(key: IndexKey, location: RecordLocation, region: CorruptRegion)] = []

    do {
      for input in inputs {
        if background.isStopped { throw CaskError.closed }
        // Never past what 32-bit offsets reach (open reports any excess).
        let length = min(try input.file.size(), CaskFormat.maximumSegmentLength)
        bytesBefore += length
        let entries = try hintEntries(of: input, length: length)
        // Which of the segment's records are still current, in short lock holds.
        var live: [(IndexKey, RecordLocation)] = []
        for chunk in stride(from: 0, to: entries.count, by: 4096) {
          let slice = entries[chunk..<min(chunk + 4096, entries.count)]
          state.withLock { state in
            for entry in slice where !entry.isDelete {
              let key = IndexKey(entry.key)
              let location = RecordLocation(segment: input.id, offset: entry.offset, length: entry.length)
              if state.directory[key] == location { live.append((key, location)) }
            }
          }
        }
        try copy(
          live, from: input, into: &outputs, copied: &copied, damaged: &damaged, orderBase: last)
      }
      // 2. Make the outputs durable, give them hints, and put them in place.
      for output in outputs {
        try output.segment.file.sync()
        try HintFile(
          segmentID: output.segment.id, segmentLength: output.end, maxSequence: output.maxSequence,
          entries: output.hints
        ).write(in: path, fileSystem: fileSystem, cipher: cipher)
        try fileSystem.rename(output.temporaryPath, to: output.finalPath)
      }
      try fileSystem.syncDirectory(path)
    } catch {
      // Undo: remove every output under either name, with its hint. An output left on disk
      // but unknown to this store could bring back keys deleted later, so if the cleanup
      // fails the store stops writing until it is reopened (open then knows every file).
      do {
        for output in outputs {
          output.segment.file.close()
          try fileSystem.removeFile(output.temporaryPath)
          try fileSystem.removeFile(output.finalPath)
          try fileSystem.removeFile("\(path)/\(Segment.hintName(id: output.segment.id))")
        }
        try fileSystem.syncDirectory(path)
      } catch let cleanup {
        writer.withLock { writer in
          writer.failure =
            writer.failure ?? (cleanup as? CaskError ?? .io(operation: "compaction cleanup", path: path, errno: EIO))
        }
      }
      throw error
    }

    // 3. Point the index at the copies, unless a writer replaced the key meanwhile.
    state.withLock { state in
      for output in outputs { state.segments[output.segment.id] = output.segment }
    }
    for chunk in stride(from: 0, to: copied.count, by: 4096) {
      let slice = copied[chunk..<min(chunk + 4096, copied.count)]
      state.withLock { state in
        for record in slice {
          state.directory.relocate(record.key, from: record.from, to: record.to)
        }
      }
    }
    state.withLock { state in
      for entry in damaged { state.directory.drop(entry.key, ifAt: entry.location) }
    }

    // 4. Remove the inputs, oldest first, each removal made durable before the next, and stop
    //    at the first failure: a newer segment (which may hold a tombstone) never goes while
    //    an older one (which may hold the value it deleted) stays. Inputs that could not be
    //    removed stay known to the store, entirely dead, so the next compaction removes them.
    var removed = 0
    for input in inputs {
      do {
        try fileSystem.removeFile("\(path)/\(Segment.hintName(id: input.id))")
        try fileSystem.removeFile("\(path)/\(Segment.fileName(id: input.id))")
        try fileSystem.syncDirectory(path)
        removed += 1
      } catch {
        break
      }
    }
    state.withLock { state in
      for (position, input) in inputs.enumerated() {
        if position < removed {
          state.segments[input.id] = nil
          state.directory.forgetSegment(input.id)
        } else {
          state.directory.markDead(input.id)
        }
      }
      state.compactions += 1
    }

    return CompactionReport(
      inputSegments: inputs.count, outputSegments: outputs.count, recordsCopied: copied.count,
      bytesBefore: bytesBefore, bytesAfter: outputs.reduce(0) { $0 + $1.end }, damagedRecords: damaged.map(\.region))
  }

  /// The records of a sealed segment, from its hint file, or by scanning it.
  private func hintEntries(of segment: Segment, length: UInt64) throws -> [HintEntry] {
    let hintPath = "\(path)/\(Segment.hintName(id: segment.id))"
    // A hint open cannot use (a link or a FIFO under its name, refused with ELOOP or EINVAL; a
    // failed read) is passed over as open passes over it: the segment is scanned instead
    // (compaction used to fail on it, every time, until the file was gone).
    if fileSystem.fileKind(hintPath) == .file, let file = try? fileSystem.open(hintPath, mode: .readOnly) {
      defer { file.close() }
      if let bytes = try? file.read(count: Int(try file.size()), at: 0),
        let hint = try? HintFile.decode(bytes, cipher: cipher, path: hintPath), hint.segmentID == segment.id,
        hint.segmentLength == length
      {
        return hint.entries
      }
    }
    var entries: [HintEntry] = []
    var scanner = SegmentScanner(file: segment.file, length: length)
    _ = try scanner.scan { batch in
      for record in batch {
        guard
          let key = try? cipher.openKey(
            record.keyMessage, file: Segment.fileName(id: segment.id), offset: record.offset)
        else { continue }
        entries.append(
          HintEntry(
            isDelete: record.header.isDelete, offset: UInt32(record.offset),
            length: UInt32(record.header.totalLength), key: key))
      }
    }
    return entries
  }

  /// Copies live records of one input into the outputs, in file order, with large writes.
  private func copy(
    _ live: [(IndexKey, RecordLocation)], from input: Segment, into outputs: inout [OutputSegment],
    copied: inout [CopiedRecord], damaged: inout [(key: IndexKey, location: RecordLocation, region: CorruptRegion)],
    orderBase: Segment
  ) throws {
    let limit = min(options.segmentSizeLimit, CaskFormat.maximumSegmentLength)
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 20)
    var index = 0
    while index < live.count {
      // Read a run of records in one positioned read when they sit close together.
      var runEnd = index + 1
      let runStart = UInt64(live[index].1.offset)
      var runBytes = UInt64(live[index].1.length)
      while runEnd < live.count, UInt64(live[runEnd].1.offset) + UInt64(live[runEnd].1.length) - runStart <= 1 << 20 {
        runBytes = UInt64(live[runEnd].1.offset) + UInt64(live[runEnd].1.length) - runStart
        runEnd += 1
      }
      let run = try input.file.read(count: Int(runBytes), at: runStart)
      guard run.count == Int(runBytes) else {
        throw CaskError.corrupt(file: input.path, offset: runStart, reason: "segment ended early during compaction")
      }
      for (key, location) in live[index..<runEnd] {
        let start = run.startIndex + Int(UInt64(location.offset) - runStart)
        var record = Array(run[start..<start + Int(location.length)])
        guard let header = record.withUnsafeBytes({ RecordHeader.parse($0) }),
          header.totalLength == record.count,
          record.withUnsafeBytes({ RecordHeader.checksumMatches($0) })
        else {
          // A damaged record cannot be served anyway (get reports it as corrupt); it is not
          // copied, so the key goes with its segment, and the report says so.
          damaged.append(
            (
              key, location,
              CorruptRegion(
                file: Segment.fileName(id: input.id), offset: UInt64(location.offset),
                length: UInt64(location.length), reason: "damaged record left out by compaction")
            ))
          continue
        }
        // Each copy stands alone: mark it as the end of its own batch.
        record[CaskFormat.recordFlagsOffset] = CaskFormat.recordFlagBatchStart | CaskFormat.recordFlagBatchEnd
        RecordEncoder.setChecksum(in: &record, recordAt: 0, length: record.count)

        if outputs.isEmpty || outputs[outputs.count - 1].end + UInt64(buffer.count + record.count) > limit {
          try flush(&buffer, to: &outputs)
          if outputs.isEmpty
            || outputs[outputs.count - 1].end + UInt64(record.count) > limit
              && outputs[outputs.count - 1].end > UInt64(CaskFormat.segmentHeaderLength)
          {
            // Only a segment header the engine did not write has an order sub this close to
            // 2^32 (each compaction adds its output count to the last input's).
            let (sub, overflow) = orderBase.order.sub.addingReportingOverflow(UInt32(clamping: outputs.count + 1))
            guard !overflow else {
              throw CaskError.corrupt(
                file: Segment.fileName(id: orderBase.id), offset: 0,
                reason: "the segment's order leaves no room for compaction output")
            }
            outputs.append(try startOutput(order: SegmentOrder(base: orderBase.order.base, sub: sub)))
          }
        }
        // Changed in place: a copy of the output would copy its hint array on every record.
        let last = outputs.count - 1
        let offset = outputs[last].end + UInt64(buffer.count)
        let to = RecordLocation(segment: outputs[last].segment.id, offset: UInt32(offset), length: UInt32(record.count))
        outputs[last].hints.append(HintEntry(isDelete: false, offset: to.offset, length: to.length, key: key.string))
        outputs[last].maxSequence = max(outputs[last].maxSequence, header.sequence)
        copied.append(CopiedRecord(key: key, from: location, to: to))
        buffer.append(contentsOf: record)
        if buffer.count >= 1 << 20 { try flush(&buffer, to: &outputs) }
      }
      index = runEnd
    }
    try flush(&buffer, to: &outputs)
  }

  private func flush(_ buffer: inout [UInt8], to outputs: inout [OutputSegment]) throws {
    guard !buffer.isEmpty, let last = outputs.indices.last else { return }
    let output = outputs[last].segment
    let end = outputs[last].end
    try buffer.withUnsafeBytes { try output.file.write($0, at: end) }
    outputs[last].end += UInt64(buffer.count)
    buffer.removeAll(keepingCapacity: true)
  }

  /// Creates an output segment under a temporary name, with an id from the writer's sequence.
  private func startOutput(order: SegmentOrder) throws -> OutputSegment {
    let id = try writer.withLock { writer in try allocateSegmentID(&writer) }
    let finalPath = "\(path)/\(Segment.fileName(id: id))"
    let temporaryPath = finalPath + CaskFormat.temporarySuffix
    let file = try fileSystem.open(temporaryPath, mode: .createNew)
    do {
      try file.write(Data(Segment.encodeHeader(id: id, order: order)), at: 0)
    } catch {
      // Not yet among the outputs the caller's cleanup removes.
      file.close()
      try? fileSystem.removeFile(temporaryPath)
      throw error
    }
    return OutputSegment(
      segment: Segment(id: id, order: order, file: file), temporaryPath: temporaryPath, finalPath: finalPath,
      end: UInt64(CaskFormat.segmentHeaderLength), hints: [], maxSequence: 0)
  }
}

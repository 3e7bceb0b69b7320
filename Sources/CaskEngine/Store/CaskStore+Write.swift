import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension CaskStore {
  /// An operation encrypted into its record, ready to append.
  struct Prepared {
    var key: IndexKey
    /// The whole record; its flags, sequence and CRC are set under the writer lock.
    var record: [UInt8]
    var isDelete: Bool
  }

  /// What a commit changed.
  struct CommitResult {
    var written = 0
    var deleted = 0
  }

  /// Encrypts a batch outside any lock, then appends it as one write under the writer lock,
  /// updates the index, and waits for durability as the options ask.
  func commit(_ batch: CaskBatch) throws -> CommitResult {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("a write")
    let durable = options.durability == .always
    if durable { groupCommit.begin() }
    var announced = durable
    defer { if announced { groupCommit.end() } }
    var prepared = try prepare(batch)
    guard !prepared.isEmpty else { return CommitResult() }
    let (ticket, result) = try writer.withLock { writer in
      try addHookWrites(for: batch, to: &prepared)
      return try append(&prepared, writer: &writer)
    }
    // Appended: `finishCommit` tells the group commit so.
    announced = false
    try finishCommit(ticket: ticket, result: result, announced: durable)
    return result
  }

  /// After the writer lock is released: durability as the options ask, and the compaction check.
  ///
  /// - Parameter announced: the commit was announced to `groupCommit` with `begin`.
  func finishCommit(ticket: UInt64, result: CommitResult, announced: Bool = false) throws {
    guard result.written > 0 else {
      if announced { groupCommit.end() }
      return
    }
    if options.durability == .always { try waitUntilDurable(ticket, announced: announced) }
    background.noteWrite(store: self)
  }

  /// Encrypts the operations of a batch, keeping one per key (the last operation on a key
  /// wins), in the order of their last occurrence. Each message is sealed straight into its
  /// record.
  func prepare(_ batch: CaskBatch) throws -> [Prepared] {
    let operations = batch.operations
    if operations.count == 1 { return [try prepare(operations[0])] }
    var lastIndex: [IndexKey: Int] = [:]
    for (index, operation) in operations.enumerated() { lastIndex[IndexKey(operation.key)] = index }
    var prepared: [Prepared] = []
    prepared.reserveCapacity(lastIndex.count)
    for (index, operation) in operations.enumerated() where lastIndex[IndexKey(operation.key)] == index {
      prepared.append(try prepare(operation))
    }
    return prepared
  }

  private func prepare(_ operation: CaskBatch.Operation) throws -> Prepared {
    let key = operation.key
    let record = try IndexKey.withUTF8(of: key) { keyBytes -> [UInt8] in
      let keyMessageLength = RecordCipher.messageLength(plaintextLength: keyBytes.count)
      switch operation {
      case .put(_, let value):
        return try value.withUnsafeBytes { valueBytes in
          try RecordEncoder.make(
            type: CaskFormat.recordTypePut, keyMessageLength: keyMessageLength,
            valueMessageLength: RecordCipher.valueMessageLength(
              valueLength: valueBytes.count, keyLength: keyBytes.count)
          ) { keyMessage, valueMessage in
            try cipher.sealKey(keyBytes, into: keyMessage)
            try cipher.sealValue(valueBytes, forKey: keyBytes, into: valueMessage)
          }
        }
      case .delete:
        return try RecordEncoder.make(
          type: CaskFormat.recordTypeDelete, keyMessageLength: keyMessageLength, valueMessageLength: 0
        ) { keyMessage, _ in
          try cipher.sealKey(keyBytes, into: keyMessage)
        }
      }
    }
    let isDelete: Bool
    if case .delete = operation { isDelete = true } else { isDelete = false }
    return Prepared(key: IndexKey(key), record: record, isDelete: isDelete)
  }

  /// Appends under the writer lock. Deletes of absent keys are dropped here, where no other
  /// writer can interleave. Sets each record's flags, sequence and CRC in place.
  func append(_ operations: inout [Prepared], writer: inout WriterState) throws -> (UInt64, CommitResult) {
    if writer.closed { throw CaskError.closed }
    if let failure = writer.failure { throw failure }
    if operations.contains(where: { $0.isDelete }) {
      let present = state.withLock { state in
        operations.map { !$0.isDelete || state.directory[$0.key] != nil }
      }
      operations = zip(operations, present).filter { $0.1 }.map { $0.0 }
    }
    guard !operations.isEmpty else { return (writer.ticket, CommitResult()) }

    let firstSequence = writer.nextSequence
    guard UInt64.max - firstSequence >= UInt64(operations.count) else {
      // Only a damaged or crafted record or hint claims a sequence this large (see open).
      throw CaskError.corrupt(
        file: writer.active.map { Segment.fileName(id: $0.segment.id) } ?? CaskFormat.headerFileName,
        offset: writer.active?.end ?? 0,
        reason: "no sequence numbers left: a record or hint of this store claims a sequence near 2^64")
    }
    for index in operations.indices {
      let isLast = index == operations.count - 1
      let flags = (isLast ? CaskFormat.recordFlagBatchEnd : 0) | (index == 0 ? CaskFormat.recordFlagBatchStart : 0)
      operations[index].record.withUnsafeMutableBytes {
        RecordEncoder.finish($0, flags: flags, sequence: firstSequence + UInt64(index))
      }
    }
    let buffer: [UInt8]
    if operations.count == 1 {
      buffer = operations[0].record
    } else {
      var joined: [UInt8] = []
      joined.reserveCapacity(operations.reduce(0) { $0 + $1.record.count })
      for operation in operations { joined.append(contentsOf: operation.record) }
      buffer = joined
    }
    try ensureRoom(for: UInt64(buffer.count), writer: &writer)
    guard let segment = writer.active?.segment, let start = writer.active?.end else { throw CaskError.closed }
    if options.durability == .always { reserveSpace(for: UInt64(buffer.count), writer: &writer) }
    do {
      try buffer.withUnsafeBytes { try segment.file.write($0, at: start) }
    } catch {
      // Cut any partial write (and the reserved zeros) so the next append starts on a record
      // boundary.
      do {
        try segment.file.truncate(to: start)
        writer.active?.reserved = start
      } catch {
        writer.failure = error as? CaskError ?? .io(operation: "truncate", path: segment.path, errno: EIO)
      }
      throw error
    }
    // Taken out of the writer state (not copied), so appending to its tombstones stays O(1)
    // instead of copying the whole array on every write.
    guard var active = writer.active.take() else { throw CaskError.closed }
    writer.nextSequence += UInt64(operations.count)
    writer.ticket += 1

    let written = operations
    var result = CommitResult(written: written.count)
    // What each operation did to its key (nil: a delete of a key that was gone), reported to
    // observers, if there are any, once the index shows the commit.
    let kinds = withUnsafeTemporaryAllocation(of: RecordLocation.self, capacity: written.count) { locations in
      var offset = start
      for (index, operation) in written.enumerated() {
        let length = UInt32(operation.record.count)
        locations[index] = RecordLocation(segment: active.segment.id, offset: UInt32(offset), length: length)
        if operation.isDelete {
          active.tombstones.append(
            HintEntry(isDelete: true, offset: UInt32(offset), length: length, key: operation.key.string))
        }
        offset += UInt64(length)
      }
      active.end = offset
      active.reserved = max(active.reserved, offset)
      return state.withLock { state in
        written.indices.map { index -> CaskChange.Kind? in
          let operation = written[index]
          if operation.isDelete {
            guard state.directory.applyDelete(operation.key, at: locations[index]) else { return nil }
            result.deleted += 1
            return .deleted
          }
          return state.directory.applyPut(operation.key, at: locations[index]) ? .updated : .inserted
        }
      }
    }
    active.maxSequence = writer.nextSequence - 1
    writer.active = active

    // Under the writer lock, so observers see commits in the order they happened. Checked after
    // the index update: an observer that registers later than this reads the commit instead.
    if observers.isObserved {
      let changes = zip(written, kinds).compactMap { operation, kind in
        kind.map { CaskChange(key: operation.key.string, kind: $0) }
      }
      userCode.running { observers.notify(changes) }
    }
    return (writer.ticket, result)
  }

  /// How many zero bytes `reserveSpace` writes ahead of the writer at a time.
  static let reserveChunk: UInt64 = 1 << 20

  /// Under `.always`, makes sure the file already reaches past the next `length` bytes, by
  /// writing zeros up to a megabyte ahead, so that most syncs rewrite blocks the file already
  /// has: on ext4 and XFS an `fdatasync` that changes the file's size also commits the journal,
  /// which doubled its time for a group of 8 commits on this project's test machine
  /// (Docs/BENCHMARKS.md). Open, seal and close cut the zeros off again (Docs/FORMAT.md,
  /// "Reserved space").
  ///
  /// A failure here (a full disk, say) is not the append's: the append then writes past the
  /// zeros that were written as it would without them, and reports its own failure.
  private func reserveSpace(for length: UInt64, writer: inout WriterState) {
    // A record larger than a chunk pays for its own growth: its data dominates the sync anyway.
    guard length <= Self.reserveChunk, let active = writer.active, active.end + length > active.reserved else {
      return
    }
    let limit = max(min(options.segmentSizeLimit, CaskFormat.maximumSegmentLength), active.end + length)
    let target = min(active.end + length + Self.reserveChunk, limit)
    let start = max(active.reserved, active.end)
    let zeros = [UInt8](repeating: 0, count: Int(target - start))
    // Also when the write fails: part of the zeros may be there, and `reserved` must reach
    // past them for seal and close to cut them.
    try? zeros.withUnsafeBytes { try active.segment.file.write($0, at: start) }
    writer.active?.reserved = target
  }

  /// Cuts the zeros reserved after the last record of `active` (before it is synced for good).
  func releaseReservedSpace(of active: inout ActiveSegment) throws {
    guard active.reserved > active.end else { return }
    try active.segment.file.truncate(to: active.end)
    active.reserved = active.end
  }

  /// Seals the active segment and starts a new one if `length` more bytes would not fit.
  /// A batch larger than the limit gets a segment of its own.
  private func ensureRoom(for length: UInt64, writer: inout WriterState) throws {
    let limit = min(options.segmentSizeLimit, CaskFormat.maximumSegmentLength)
    let header = UInt64(CaskFormat.segmentHeaderLength)
    // Offsets are 32-bit: a batch must fit in an empty segment.
    guard header + length <= CaskFormat.maximumSegmentLength else {
      throw CaskError.valueTooLarge(length: Int(length), maximum: Int(CaskFormat.maximumSegmentLength - header))
    }
    if let active = writer.active {
      if active.end + length <= limit
        || (active.end == header && active.end + length <= CaskFormat.maximumSegmentLength)
      {
        return
      }
      try seal(active, writer: &writer)
    }
    try startSegment(writer: &writer)
  }

  /// Syncs a full segment and writes its hint; everything written so far is then durable.
  func seal(_ active: ActiveSegment, writer: inout WriterState) throws {
    var active = active
    do {
      try releaseReservedSpace(of: &active)
      try syncGate.sync(active.segment.file)
    } catch {
      // What reached the disk is unknown: stop writing until the store is reopened.
      writer.failure = error as? CaskError ?? .io(operation: "fdatasync", path: active.segment.path, errno: EIO)
      throw error
    }
    groupCommit.markDurable(writer.ticket)
    try writeHint(for: active)
    writer.active = nil
  }

  /// Creates the next segment file (header written and synced, then renamed into place).
  func startSegment(writer: inout WriterState) throws {
    let id = try allocateSegmentID(&writer)
    let segment = try createSegment(id: id, order: SegmentOrder(base: id, sub: 0))
    writer.active = ActiveSegment(
      segment: segment, end: UInt64(CaskFormat.segmentHeaderLength), tombstones: [], maxSequence: 0)
    state.withLock { $0.segments[id] = segment }
  }

  /// The next unused segment number.
  ///
  /// - Throws: `CaskError.io` with `EEXIST`, naming the file with the highest number, when no
  ///   number is left above it: a file numbered `ffffffff` or `fffffffe` (or a segment whose
  ///   header claims such a number) is in the store, which CipherCask would write only after
  ///   four billion segments. Reads go on; for writes, make a rekeyed copy (`rekeyedCopy`,
  ///   `cask rekey`), whose numbers start again at 1.
  func allocateSegmentID(_ writer: inout WriterState) throws -> UInt32 {
    guard writer.nextSegmentID < UInt32.max else {
      throw CaskError.io(
        operation:
          "start a segment (no segment number is left after this file's, the highest in the store; "
          + "a rekeyed copy numbers its segments from 1 again)",
        path: "\(path)/\(writer.highestNumberHolder ?? Segment.fileName(id: UInt32.max))", errno: EEXIST)
    }
    defer {
      writer.highestNumberHolder = Segment.fileName(id: writer.nextSegmentID)
      writer.nextSegmentID += 1
    }
    return writer.nextSegmentID
  }

  /// Creates a segment file with its header, synced and visible under its final name.
  func createSegment(id: UInt32, order: SegmentOrder) throws -> Segment {
    let finalPath = "\(path)/\(Segment.fileName(id: id))"
    let temporary = finalPath + CaskFormat.temporarySuffix
    try? fileSystem.removeFile(temporary)
    let file = try fileSystem.open(temporary, mode: .createNew)
    do {
      try file.write(Data(Segment.encodeHeader(id: id, order: order)), at: 0)
      try file.sync()
      try fileSystem.rename(temporary, to: finalPath)
      try fileSystem.syncDirectory(path)
    } catch {
      file.close()
      try? fileSystem.removeFile(temporary)
      throw error
    }
    return Segment(id: id, order: order, file: file)
  }

  /// Writes the hint file of a segment (temporary file, sync, rename).
  ///
  /// The hint lists the segment's live records (from the index) and its tombstones; records
  /// already overwritten are left out (open counts their bytes as dead).
  ///
  /// - Complexity: O(n) in the number of keys, once per sealed segment.
  func writeHint(for active: ActiveSegment) throws {
    guard !active.keepsDamage else { return }
    let live = state.withLock { $0.directory.entries(inSegment: active.segment.id) }
    let entries =
      (live.map { HintEntry(isDelete: false, offset: $0.location.offset, length: $0.location.length, key: $0.key) }
      + active.tombstones).sorted { $0.offset < $1.offset }
    let hint = HintFile(
      segmentID: active.segment.id, segmentLength: active.end, maxSequence: active.maxSequence,
      entries: entries)
    try hint.write(in: path, fileSystem: fileSystem, cipher: cipher)
  }

  /// Blocks until every write with a ticket up to `ticket` is on disk, sharing syncs.
  ///
  /// - Parameter announced: the commit of `ticket` was announced to `groupCommit` with `begin`.
  func waitUntilDurable(_ ticket: UInt64, announced: Bool = false) throws {
    try groupCommit.waitUntilDurable(ticket, announced: announced) {
      let (covered, file) = try writer.withLock { writer -> (UInt64, (any StorageFile)?) in
        if let failure = writer.failure { throw failure }
        return (writer.ticket, writer.active?.segment.file)
      }
      do {
        if let file {
          try syncGate.sync(file)
        } else if let failure = syncGate.failed {
          // No active segment: every ticket is in a sealed (synced) one, unless that sync failed.
          throw failure
        }
      } catch {
        let failure = error as? CaskError ?? CaskError.io(operation: "fdatasync", path: path, errno: EIO)
        writer.withLock { $0.failure = failure }
        throw failure
      }
      return covered
    }
  }
}

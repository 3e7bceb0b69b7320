import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension CaskStore {
  /// Appends under the writer lock. Deletes of absent keys are dropped here, where no other
  /// writer can interleave. Sets each record's flags, sequence and CRC in place.
  func append(_ operations: inout [Prepared], writer: inout WriterState) throws -> (UInt64, CommitResult) {
    try writer.throwIfClosed()
    try writer.throwIfFailed()
    // Nothing is appended once the index is damaged: it could not record the write.
    try state.withLock { try $0.throwIfDamaged() }
    dropDeletesOfAbsentKeys(&operations)
    dropDeletesOfDetachedKeys(&operations)
    guard !operations.isEmpty else { return (writer.ticket, CommitResult()) }
    let replaced = replacedSections(of: operations)
    // The segment and offset the records land at, which version 3 key messages bind.
    try ensureRoom(for: UInt64(operations.reduce(0) { $0 + $1.record.count }), writer: &writer)
    try number(&operations, writer: writer)
    let start: UInt64
    if operations.count == 1 {
      // A single record is written from its own buffer, not copied.
      start = try operations[0].record.withUnsafeBytes { try write($0, writer: &writer) }
    } else {
      start = try Self.joined(operations).withUnsafeBytes { try write($0, writer: &writer) }
    }
    // Taken out of the writer state (not copied), so appending to its tombstones stays O(1)
    // instead of copying the whole array on every write.
    guard var active = writer.active.take() else { throw CaskError.closed }
    let appended = active.end
    writer.nextSequence += UInt64(operations.count)
    writer.ticket += 1
    var result = CommitResult(written: operations.count)
    // What each operation did to its key, on the stack for small batches. Prevents: an array
    // per commit that only change observers read.
    withUnsafeTemporaryAllocation(of: CaskChange.Kind?.self, capacity: operations.count) { kinds in
      let attachedChanges = publish(
        operations, at: start, in: &active, replaced: replaced, result: &result, kinds: kinds)
      active.maxSequence = writer.nextSequence - 1
      writer.active = active
      // Under the writer lock, so observers see commits in the order they happened. Checked
      // after the index update: an observer that registers later than this reads the commit
      // instead.
      if observers.isObserved {
        var changes: [CaskChange] = []
        changes.reserveCapacity(operations.count + attachedChanges.count)
        var next = 0
        for (index, (operation, kind)) in zip(operations, kinds).enumerated() {
          // Each write's own change, then what it did to attached keys.
          if let kind { changes.append(CaskChange(key: operation.key.string, kind: kind)) }
          while next < attachedChanges.count && attachedChanges[next].operation == index {
            changes.append(attachedChanges[next].change)
            next += 1
          }
        }
        userCode.running { observers.notify(changes) }
      }
      kinds.deinitialize()
    }
    noteAppended((writer.active?.end ?? appended) - appended, writer: &writer)
    return (writer.ticket, result)
  }

  /// Leaves out the deletes of keys the index does not have: they would write a tombstone
  /// for nothing.
  private func dropDeletesOfAbsentKeys(_ operations: inout [Prepared]) {
    // The lock taken inside each key's bytes, as `locate` does, and no new array when every
    // key is there (the usual case). Prevents: a closure over the locked state copying the
    // whole `KeyDirectory` (a retain and a release of each of its tables) on every delete.
    var absent: [Int] = []
    for index in operations.indices where operations[index].isDelete {
      let present = IndexKey.withUTF8(of: operations[index].key.string) { bytes in
        state.withLock { $0.directory.location(forBytes: bytes) != nil }
      }
      if !present { absent.append(index) }
    }
    for index in absent.reversed() { operations.remove(at: index) }
  }

  /// Gives the records consecutive sequence numbers, the batch flags, and their CRCs.
  private func number(_ operations: inout [Prepared], writer: WriterState) throws {
    let firstSequence = writer.nextSequence
    guard UInt64.max - firstSequence >= UInt64(operations.count) else {
      // Only a damaged or crafted record or hint claims a sequence this large (see open).
      throw CaskError.corrupt(
        file: writer.active.map { Segment.fileName(id: $0.segment.id) } ?? CaskFormat.headerFileName,
        offset: writer.active?.end ?? 0,
        reason: "no sequence numbers left: a record or hint of this store claims a sequence near 2^64")
    }
    guard let segment = writer.active?.segment, let end = writer.active?.end else { throw CaskError.closed }
    let records = operations
    // On the stack for small batches. Prevents: an array allocated for every single put.
    try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: records.count) { offsets in
      var offset = end
      for (index, record) in records.enumerated() {
        offsets.initializeElement(at: index, to: offset)
        offset += UInt64(record.record.count)
      }
      // Each record's key message binds its own place only, so they seal independently.
      let lanes = SealingLanes.lanes(count: records.count, bytes: 0, limit: options.sealingThreads)
      try SealingLanes.forEach(count: records.count, lanes: lanes) { index in
        let isLast = index == records.count - 1
        let flags = (isLast ? CaskFormat.recordFlagBatchEnd : 0) | (index == 0 ? CaskFormat.recordFlagBatchStart : 0)
        try number(
          records[index], flags: flags, sequence: firstSequence + UInt64(index), segment: segment,
          offset: offsets[index])
      }
    }
  }

  /// Gives one record its flags, sequence number and CRC, sealing a version 3 key message
  /// for the place it is written at, under the segment's key epoch (the current one: the
  /// active segment always is).
  ///
  /// Writes only into the record's bytes (a reference), so that records of one batch can be
  /// numbered on several threads at once.
  func number(_ operation: Prepared, flags: UInt8, sequence: UInt64, segment: Segment, offset: UInt64) throws {
    if segment.cipher.bindsRecords {
      try sealKeyMessage(of: operation, flags: flags, sequence: sequence, segment: segment, offset: offset)
    }
    operation.record.withUnsafeMutableBytes { RecordEncoder.finish($0, flags: flags, sequence: sequence) }
  }

  /// Seals a version 3 record's key message, bound to the place the record is written at,
  /// into the room `prepare` left for it.
  private func sealKeyMessage(
    of operation: Prepared, flags: UInt8, sequence: UInt64, segment: Segment, offset: UInt64
  ) throws {
    let segmentID = segment.id
    let cipher = segment.cipher
    let type = operation.isDelete ? CaskFormat.recordTypeDelete : CaskFormat.recordTypePut
    let key = operation.key.string
    let isDelete = operation.isDelete
    let attached = operation.attached
    try operation.record.withUnsafeMutableBytes { record in
      let keyLength = Int(
        loadLittleEndian(UnsafeRawBufferPointer(record), at: CaskFormat.recordKeyLengthOffset, as: UInt32.self))
      let keyStart = CaskFormat.recordHeaderLength
      try withUnsafeTemporaryAllocation(byteCount: cipher.bindingLength(delete: isDelete), alignment: 8) { binding in
        if isDelete && cipher.shortTombstones {
          RecordBinding.encodeTombstone(
            flags: flags, segmentID: segmentID, offset: cipher.boundOffset(offset), sequence: sequence, into: binding)
        } else {
          RecordBinding.encode(
            type: type, flags: flags, segmentID: segmentID, offset: cipher.boundOffset(offset), sequence: sequence,
            valueMessage: isDelete ? nil : UnsafeRawBufferPointer(rebasing: record[(keyStart + keyLength)...]),
            into: binding)
        }
        try IndexKey.withUTF8(of: key) { keyBytes in
          try attached.withUnsafeBytes { section in
            try cipher.sealKey(
              keyBytes, encodedBinding: UnsafeRawBufferPointer(binding), attached: section,
              into: UnsafeMutableRawBufferPointer(rebasing: record[keyStart..<keyStart + keyLength]))
          }
        }
      }
    }
  }

  /// The records as one buffer, for one `pwrite`.
  private static func joined(_ operations: [Prepared]) -> [UInt8] {
    var joined: [UInt8] = []
    joined.reserveCapacity(operations.reduce(0) { $0 + $1.record.count })
    for operation in operations { operation.record.withUnsafeBytes { joined.append(contentsOf: $0) } }
    return joined
  }

  /// Writes `buffer` at the end of the active segment (sealing and starting one first when it
  /// does not fit).
  ///
  /// - Returns: the offset it was written at.
  /// - Throws: the write's error, after cutting a partial write off again (or marking the
  ///   writer failed when even that fails).
  private func write(_ buffer: UnsafeRawBufferPointer, writer: inout WriterState) throws -> UInt64 {
    try ensureRoom(for: UInt64(buffer.count), writer: &writer)
    guard let segment = writer.active?.segment, let start = writer.active?.end else { throw CaskError.closed }
    if options.durability != .always { startWriteback(writer: &writer) }
    reserveSpace(for: UInt64(buffer.count), writer: &writer)
    if let zeroed = writer.active?.zeroed, start + UInt64(buffer.count) <= zeroed,
      segment.file.writeMapped(buffer, at: start)
    {
      return start
    }
    do {
      try segment.file.write(buffer, at: start)
    } catch {
      // Cut any partial write (and the reserved zeros) so the next append starts on a record
      // boundary.
      do {
        try segment.file.truncate(to: start)
        writer.active?.reserved = start
        writer.active?.zeroed = 0
      } catch {
        writer.failure = CaskError.converting(error, operation: "truncate", path: segment.path)
      }
      throw error
    }
    return start
  }

  /// Points the index at the records written at `start` (or removes their keys), and keeps
  /// the tombstones for the segment's hint.
  ///
  /// - Parameter kinds: initialized here, one per operation: what it did to its key (nil: a
  ///   delete of a key that was gone), for the change observers.
  /// - Parameter replaced: the attachment sections of the records the operations replace
  ///   (`replacedSections`).
  /// - Returns: the changes to attached keys, each with the position of the write that made it
  ///   (empty when nobody observes the store).
  private func publish(
    _ operations: [Prepared], at start: UInt64, in active: inout ActiveSegment, replaced: [RecordLocation: [UInt8]],
    result: inout CommitResult, kinds: UnsafeMutableBufferPointer<CaskChange.Kind?>
  ) -> [(operation: Int, change: CaskChange)] {
    let log = AttachedChangeLog()
    let observed = observers.isObserved
    withUnsafeTemporaryAllocation(of: RecordLocation.self, capacity: operations.count) { locations in
      var offset = start
      for (index, operation) in operations.enumerated() {
        let length = UInt32(operation.record.count)
        locations[index] = RecordLocation(segment: active.segment.id, offset: UInt32(offset), length: length)
        if operation.isDelete {
          IndexKey.withUTF8(of: operation.key.string) {
            active.tombstones.append(isDelete: true, offset: UInt32(offset), length: length, key: $0)
          }
        }
        offset += UInt64(length)
      }
      active.end = offset
      active.reserved = max(active.reserved, offset)
      state.withLock { state in
        // Prevents: a closure and a lookup per write in a store without attached keys.
        let attaching =
          !state.directory.attachedOwners.isEmpty || !state.directory.attachedOwnersKnown
          || operations.contains { !$0.attached.isEmpty }
        let reader = attaching ? Self.sectionReader(known: replaced, segments: state.segments) : nil
        for index in operations.indices {
          let operation = operations[index]
          // `log.detached` is empty here: `record(into:)` below empties it for every operation.
          let onChange: KeyDirectory.AttachedChange? =
            reader == nil
            ? nil
            : { key, added, existed in
              log.detached.note(key, added: added)
              guard observed else { return }
              let kind: CaskChange.Kind = added ? (existed ? .updated : .inserted) : .deleted
              log.changes.append((index, CaskChange(key: String(decoding: key, as: UTF8.self), kind: kind)))
            }
          if let reader {
            IndexKey.withUTF8(of: operation.key.string) {
              state.directory.dropAttachments(ofOwner: $0, oldSection: reader, onChange: onChange)
            }
          }
          let kind: CaskChange.Kind?
          if operation.isDelete {
            let existed = state.directory.applyDelete(operation.key, at: locations[index])
            if existed { result.deleted += 1 }
            kind = existed ? .deleted : nil
          } else {
            kind = state.directory.applyPut(operation.key, at: locations[index]) ? .updated : .inserted
          }
          if let reader, !operation.attached.isEmpty {
            IndexKey.withUTF8(of: operation.key.string) { owner in
              operation.attached.withUnsafeBytes {
                state.directory.attach(
                  $0, owner: owner, at: locations[index], oldSection: reader, onChange: onChange)
              }
            }
          }
          log.detached.record(into: &active.tombstones, offset: locations[index].offset)
          (kinds.baseAddress! + index).initialize(to: kind)
        }
      }
    }
    return log.changes
  }

  /// What the directory's callback gathers while `publish` applies a commit's attached keys:
  /// the keys an operation dropped and added, and the changes for the observers. Fields not
  /// checked for exclusive access at run time: the callback runs on the writing thread, inside
  /// `publish`, and nothing else reaches them. Prevents: the variables the callback captured
  /// boxed on the heap for every operation, and two run-time exclusivity checks
  /// (`swift_beginAccess`) for every attached key of every save.
  private final class AttachedChangeLog {
    @exclusivity(unchecked) var detached = DetachedKeys()
    @exclusivity(unchecked) var changes: [(operation: Int, change: CaskChange)] = []
  }

  /// How many zero bytes `reserveSpace` writes ahead of the writer at a time under `.always`:
  /// the fewer syncs that grow the file, the better.
  static let reserveChunk: UInt64 = 1 << 20
  /// The same under `.periodic` and `.never`, where no sync waits for it: large enough that
  /// its own write is a small part of what it saves, small enough to stay in the CPU's cache
  /// (1 MiB measured slower than 256 KiB there).
  static let unsyncedReserveChunk: UInt64 = 256 << 10

  /// Makes sure the file already reaches past the next `length` bytes, by writing zeros up to
  /// `reserveChunk` ahead, so that appends rewrite blocks the file already has. Under `.always`:
  /// on ext4 and XFS an `fdatasync` that changes the file's size also commits the journal,
  /// which costs a second journal write per group commit (`cask-bench engine`'s durable
  /// workloads show the difference). Under the other durabilities: a write that grows the file has the
  /// file system allocate and account for new blocks (ext4's delayed allocation) on every
  /// append; one write of zeros does it once per chunk. Open, seal and close cut the zeros off
  /// again (Docs/FORMAT.md, "Reserved space").
  ///
  /// A failure here (a full disk, say) is not the append's: the append then writes past the
  /// zeros that were written as it would without them, and reports its own failure.
  private func reserveSpace(for length: UInt64, writer: inout WriterState) {
    // A record larger than a chunk pays for its own growth: its data dominates the sync anyway.
    let chunk = options.durability == .always ? Self.reserveChunk : Self.unsyncedReserveChunk
    // Fields read one by one. Prevents: a copy of the whole active segment (a retain and a
    // release of its segment and tombstones) on every append.
    guard length <= chunk, let end = writer.active?.end, let reserved = writer.active?.reserved,
      end + length > reserved, let active = writer.active
    else { return }
    let limit = max(min(options.segmentSizeLimit, CaskFormat.maximumSegmentLength), end + length)
    let target = min(end + length + chunk, limit)
    let start = max(reserved, end)
    let zeros = [UInt8](repeating: 0, count: Int(target - start))
    // Also when the write fails: part of the zeros may be there, and `reserved` must reach
    // past them for seal and close to cut them.
    do {
      try zeros.withUnsafeBytes { try active.segment.file.write($0, at: start) }
      writer.active?.zeroed = target
    } catch {
      // Not thrown: the append after it writes with `pwrite` and reports its own error.
    }
    writer.active?.reserved = target
  }

  /// How many appended bytes `startWriteback` lets gather before it hands them to the kernel.
  static let writebackChunk: UInt64 = 8 << 20

  /// Under `.never` and `.periodic`: hands each `writebackChunk` of appended records to the
  /// kernel's writeback as soon as it is complete, without waiting and without syncing
  /// anything. Prevents: the seal of a full segment writing all of it in its `fdatasync` while
  /// the writer waits (0.15–0.2 s for each 256 MiB segment of a 1,000,000-key fill here), and
  /// dirty pages piling up until the kernel throttles the writer. Stops at a 64 KiB boundary
  /// below the end. Prevents: a page still being filled going to the disk and the next append
  /// into it waiting for that write, on a device that wants pages left alone while it writes
  /// them.
  private func startWriteback(writer: inout WriterState) {
    guard let end = writer.active?.end, let from = writer.active?.writebackFrom else { return }
    let boundary = end & ~(CaskFormat.writebackAlignment - 1)
    guard boundary >= from + Self.writebackChunk, let file = writer.active?.segment.file else { return }
    file.startWriteback(from: from, count: boundary - from)
    writer.active?.writebackFrom = boundary
  }

  /// Cuts the zeros reserved after the last record of `active` (before it is synced for good).
  func releaseReservedSpace(of active: inout ActiveSegment) throws {
    guard active.reserved > active.end else { return }
    try active.segment.file.truncate(to: active.end)
    active.reserved = active.end
    active.zeroed = 0
  }
}

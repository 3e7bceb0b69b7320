import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension CaskStore {
  /// Runs `body`, appending each of its writes to the log as it is made, and commits them all
  /// as one atomic batch when it returns: for batches too large to hold in memory (an import).
  ///
  /// Nothing of the batch is visible to readers (or to `stats()`) until it commits; if `body`
  /// throws, or the commit hook refuses the batch, or the process dies first, none of it ever
  /// is. Other writers, `sync()`, compaction and `close()` wait until the batch ends: it holds
  /// the writer for its whole duration (Docs/ARCHITECTURE.md, section 9, rule 15).
  ///
  /// The batch stays in the segment it starts in, which grows past `segmentSizeLimit` if it
  /// must: it holds at most `4 GiB − 1` bytes less where it starts (at least 2 GiB), and a
  /// write past that throws `valueTooLarge` (Docs/FORMAT.md, section 5.3). A key written
  /// twice is written twice; the later write wins. Change observers get the batch as one
  /// commit, its changes (one per key) in no particular order.
  ///
  /// - Parameter body: makes the writes. It must not write to this store otherwise (that throws
  ///   `CaskError.reentrantCall`); reading is fine, and sees the store without the batch.
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws; the store's write errors. The batch's records are then cut
  ///   off the log again (or, if that fails too, the writer stops until the store is reopened,
  ///   and the records are dead bytes that no open applies).
  /// - Complexity: one encryption and O(1) index work per write; memory O(keys written) plus
  ///   one megabyte, never the values. The commit makes the batch visible under the index lock
  ///   in O(keys written).
  public func streamedBatch<R>(_ body: (inout CaskStreamedBatch) throws -> R) throws -> R {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("streamed batch")
    let (value, ticket, result) = try writer.withLock { writer -> (R, UInt64, CommitResult) in
      try writer.throwIfClosed()
      try writer.throwIfFailed()
      try ensureStreamRoom(writer: &writer)
      guard let active = writer.active else { throw CaskError.closed }
      var batch = CaskStreamedBatch(
        store: self, segment: active.segment, start: active.end, nextSequence: writer.nextSequence,
        hook: try extensions.makeStreamedHook(in: self))
      do {
        let value = try userCode.running { try body(&batch) }
        try batch.close()
        let (ticket, result) = publish(batch, writer: &writer)
        return (value, ticket, result)
      } catch {
        abandon(batch, writer: &writer)
        throw error
      }
    }
    try finishCommit(ticket: ticket, result: result)
    return value
  }

  /// Starts a new segment unless the active one is below both its size limit and 2 GiB, so
  /// that a streamed batch, which never moves to another segment, has at least 2 GiB.
  private func ensureStreamRoom(writer: inout WriterState) throws {
    writer.untouchedSinceOpen = false
    guard let active = writer.active else { return try startSegment(writer: &writer) }
    let limit = min(options.segmentSizeLimit, CaskFormat.maximumSegmentLength / 2)
    if active.end < limit || active.end == active.segment.recordsStart {
      return try resumeAppending(writer: &writer)
    }
    try roll(active, writer: &writer)
  }

  /// Makes a closed streamed batch visible: every key it wrote points at its newest record.
  private func publish(_ batch: borrowing CaskStreamedBatch, writer: inout WriterState) -> (UInt64, CommitResult) {
    guard batch.count > 0, var active = writer.active.take() else { return (writer.ticket, CommitResult()) }
    var result = CommitResult(written: batch.count)
    let observed = observers.isObserved
    var changes: [CaskChange] = []
    let segmentID = active.segment.id
    state.withLock { state in
      state.directory.reserveCapacity(forKeysOf: batch.pending)
      // A streamed write carries no attached keys, but replaces the set of the record it
      // overwrites (FORMAT.md section 5.4).
      let reader =
        state.directory.attachedOwners.isEmpty && state.directory.attachedOwnersKnown
        ? nil : Self.sectionReader(known: [:], segments: state.segments)
      batch.pending.forEachEntryBytes { key, location in
        if let reader {
          var detached = DetachedKeys()
          state.directory.dropAttachments(ofOwner: key, oldSection: reader) { dropped, _, _ in
            detached.note(dropped, added: false)
            if observed {
              changes.append(CaskChange(key: String(decoding: dropped, as: UTF8.self), kind: .deleted))
            }
          }
          detached.record(into: &active.tombstones, offset: location.offset)
        }
        let kind: CaskChange.Kind?
        if location.segment == 0 {
          let tombstone = RecordLocation(segment: segmentID, offset: location.offset, length: location.length)
          let existed = state.directory.applyDelete(keyBytes: key, at: tombstone)
          if existed { result.deleted += 1 }
          kind = existed ? .deleted : nil
        } else {
          kind = state.directory.applyPut(keyBytes: key, at: location) ? .updated : .inserted
        }
        if observed, let kind { changes.append(CaskChange(key: String(decoding: key, as: UTF8.self), kind: kind)) }
      }
      if batch.replacedBytes > 0 { state.directory.addDeadBytes(batch.replacedBytes, in: segmentID) }
    }
    active.tombstones.append(contentsOf: batch.tombstones)
    let appended = batch.written - active.end
    active.end = batch.written
    active.reserved = max(active.reserved, active.end)
    active.maxSequence = batch.nextSequence - 1
    writer.nextSequence = batch.nextSequence
    writer.ticket += 1
    writer.active = active
    noteAppended(appended, writer: &writer)
    if observed { userCode.running { observers.notify(changes) } }
    return (writer.ticket, result)
  }

  /// Cuts an aborted batch's records off the segment, so the next write starts where the
  /// batch did. If the cut fails the writer stops (as after a failed append): the records have
  /// no commit marker and no open applies them, but appending after them would make them a
  /// dropped batch in the middle of the segment, which open reports as damage.
  private func abandon(_ batch: borrowing CaskStreamedBatch, writer: inout WriterState) {
    guard batch.touchedFile else { return }
    do {
      try batch.segment.file.truncate(to: batch.start)
      writer.active?.reserved = batch.start
      writer.active?.zeroed = 0
    } catch {
      writer.failure = CaskError.converting(error, operation: "truncate", path: batch.segment.path)
    }
  }
}

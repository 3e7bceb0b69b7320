import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension CaskStore {
  /// What a checkpoint is made of, taken under the writer lock (so that the index holds
  /// exactly the records before `coveredEnd`) and written on `hintQueue`.
  struct CheckpointSnapshot: Sendable {
    var directory: KeyDirectory
    /// The store's segments, the covered one last.
    var segments: [Segment]
    var coveredEnd: UInt64
    /// The covered segment's tombstones, which its hint needs when it is sealed.
    var tombstones: HintEntries
    var lastSequence: UInt64
    var generation: UInt64
    var identity: [UInt8]
    var cipher: RecordCipher
  }

  /// Counts `bytes` appended and takes a checkpoint once `Options.Checkpoints.interval` is
  /// reached, and the spacing after the last one (`spacedLog`). Called under the writer lock
  /// after an append.
  func noteAppended(_ bytes: UInt64, writer: inout WriterState) {
    guard let settings = options.checkpoints else { return }
    writer.checkpointDebt += bytes
    if writer.checkpointDebt >= max(settings.interval, spacedLog(settings, writer: writer)) {
      takeCheckpoint(writer: &writer)
    }
  }

  /// The log a checkpoint other than close's waits for after the last one:
  /// `Options.Checkpoints.spacing` times the slots of the keys that one held.
  func spacedLog(_ settings: Checkpoints, writer: WriterState) -> UInt64 {
    UInt64(settings.spacing).multipliedReportingOverflow(
      by: UInt64(writer.checkpointedKeys) * UInt64(KeyTable.slotLength)
    ).partialValue
  }

  /// Takes a checkpoint of the state under the writer lock, to be written on `hintQueue`:
  /// after a seal, at close (with `sealed`, the segment close just sealed and its
  /// tombstones, or, when there was none, the newest segment if open never appends to it),
  /// and every `interval` bytes, the last two only once the log since the last checkpoint
  /// reaches `spacedLog`. Nothing when checkpoints are off, the store is
  /// read-only or of version 2 (no manifest to bind), open found damage that stays (a
  /// checkpoint would hide it from the next open's report), the store holds fewer than
  /// `minimumKeys` keys, or a checkpoint is still being written.
  ///
  /// - Complexity: O(1) under the locks (the index is shared copy-on-write: the next write
  ///   to it copies its tables once, on the writer's thread); O(n) on the queue.
  func takeCheckpoint(
    writer: inout WriterState, sealed: (segment: Segment, end: UInt64, tombstones: HintEntries)? = nil,
    closing: Bool = false
  ) {
    guard let settings = options.checkpoints, !options.readOnly, let header = writer.header,
      let identity = Checkpoint.identity(of: header)
    else { return }
    let cipher = self.cipher
    guard cipher.bindsRecords else { return }
    guard closing || writer.checkpointDebt >= spacedLog(settings, writer: writer) else { return }
    // Close waits for the one being written (the queue never takes the writer lock); the
    // writer's other callers go on without one rather than wait.
    if closing { hintQueue.drain() }
    guard !checkpointPending.withLock({ $0 }) else { return }
    let retired = writer.retiredSegments
    let taken = state.withLock { state -> (KeyDirectory, [Segment])? in
      let recovery = state.recovery
      guard recovery.corruptRegions.isEmpty, recovery.unreadableSegments.isEmpty,
        recovery.integrityViolations.isEmpty, state.directory.count >= settings.minimumKeys,
        state.directory.damage == nil
      else { return nil }
      return (state.directory, state.segments.values.filter { !retired.contains($0.id) })
    }
    guard let (directory, unordered) = taken else { return }
    let segments = unordered.sorted { ($0.order, $0.id) < ($1.order, $1.id) }
    let covered: (id: UInt32, end: UInt64, tombstones: HintEntries)
    if let active = writer.active {
      covered = (active.segment.id, active.end, active.tombstones)
    } else if let sealed {
      covered = (sealed.segment.id, sealed.end, sealed.tombstones)
    } else if let last = segments.last, last.order.sub > 0 || last.epoch != cipher.epoch,
      let size = try? last.file.size()
    {
      // No active segment (a compaction sealed it): the newest is a compaction output, or under
      // an older key epoch, which open never appends to, so its tombstones are not needed.
      covered = (last.id, min(size, CaskFormat.maximumSegmentLength), HintEntries())
    } else {
      return
    }
    // The covered segment is the newest: a compaction output being written is not listed yet.
    guard segments.last?.id == covered.id, writer.nextSequence > 0 else { return }
    writer.checkpointDebt = 0
    writer.checkpointedKeys = directory.count
    checkpointPending.withLock { $0 = true }
    let snapshot = CheckpointSnapshot(
      directory: directory, segments: segments, coveredEnd: covered.end, tombstones: covered.tombstones,
      lastSequence: writer.nextSequence - 1, generation: writer.manifestGeneration, identity: identity, cipher: cipher)
    let checkpointWriter = CheckpointWriter(
      directory: path, fileSystem: fileSystem, failure: backgroundFailure, pending: checkpointPending,
      syncsCovered: options.syncsBeforeCheckpoint)
    if options.syncsBeforeCheckpoint {
      hintQueue.submit { checkpointWriter.write(snapshot) }
    } else {
      // The planted bug of the crash-state tests, made deterministic: the checkpoint is
      // durable before the commit that called this has synced its records.
      checkpointWriter.write(snapshot)
    }
  }

  /// Removes the checkpoint before a change it would no longer describe (a compaction
  /// retiring segments, a new key epoch), so that no later open has to tell it apart. A
  /// failure is ignored: open checks every checkpoint against the log anyway. The next
  /// checkpoint is then not spaced from it: the store has none until it is taken.
  func retireCheckpoint(writer: inout WriterState) {
    try? fileSystem.removeFile("\(path)/\(CaskFormat.checkpointFileName)")
    writer.checkpointedKeys = 0
  }
}

/// Writes a checkpoint on the hint queue: what it needs, not the store (as `HintWriter`).
struct CheckpointWriter: Sendable {
  let directory: String
  let fileSystem: any FileSystem
  let failure: Locked<CaskError?>
  let pending: Locked<Bool>
  /// Whether the covered segment is synced first (always, but in the planted-bug test).
  var syncsCovered = true

  /// Encodes, seals and writes the checkpoint atomically (temporary file, sync, rename,
  /// directory sync), after syncing the covered segment: a checkpoint never describes
  /// records the log does not durably hold. A failure is kept for `backgroundWriteFailure`; the
  /// checkpoint before stays, and open checks whichever it finds against the log.
  func write(_ snapshot: CaskStore.CheckpointSnapshot) {
    defer { pending.withLock { $0 = false } }
    do {
      try fileSystem.removeFile("\(directory)/\(CaskFormat.checkpointFileName)\(CaskFormat.temporarySuffix)")
      guard let covered = snapshot.segments.last else { return }
      var listed: [Checkpoint.SegmentEntry] = []
      for segment in snapshot.segments {
        let length =
          segment.id == covered.id
          ? snapshot.coveredEnd : min(try segment.file.size(), CaskFormat.maximumSegmentLength)
        let usage = snapshot.directory.usage[segment.id] ?? SegmentUsage()
        listed.append(
          Checkpoint.SegmentEntry(
            id: segment.id, order: segment.order, epoch: segment.epoch, length: length,
            totalBytes: usage.totalBytes, deadBytes: usage.deadBytes))
      }
      var checkpoint = Checkpoint(
        recordVersion: snapshot.cipher.version, epoch: snapshot.cipher.epoch, identity: snapshot.identity,
        generation: snapshot.generation, coveredSegment: covered.id, coveredOffset: snapshot.coveredEnd,
        lastSequence: snapshot.lastSequence, keyCount: UInt64(snapshot.directory.count),
        hashKey: snapshot.directory.hashKey, tombstoneCount: 0, segments: listed, tables: [])
      checkpoint.carriesNoAttachedKeys =
        snapshot.directory.attachedOwnersKnown && snapshot.directory.attachedOwners.isEmpty
      let bytes = try checkpoint.encoded(
        directory: snapshot.directory, tombstones: snapshot.tombstones, cipher: snapshot.cipher)
      if syncsCovered { try covered.file.sync() }
      try AtomicFile.write(
        bytes, to: "\(directory)/\(CaskFormat.checkpointFileName)", fileSystem: fileSystem,
        syncingDirectory: directory)
    } catch {
      failure.withLock { $0 = CaskError.converting(error, operation: "write checkpoint", path: directory) }
    }
  }
}

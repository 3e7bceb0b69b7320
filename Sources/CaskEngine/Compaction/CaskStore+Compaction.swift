import Foundation

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
  /// old ones. Records are copied as they are, still encrypted (only their key message is
  /// sealed again, for its new place), except those under an older key epoch after a password
  /// change: their value is decrypted and sealed again under the current key, and once no
  /// segment is under an older key the header drops it (`keyEpochs`, Docs/FORMAT.md 3a).
  ///
  /// Readers and writers keep working throughout: the index lock is taken only for short
  /// stretches, writes go to a fresh segment, and a reader that looked up an old segment reads
  /// on from it (its file is unlinked, but stays open until the last reader lets go).
  ///
  /// Crash safety: outputs are written under temporary names, synced, and renamed into place
  /// before any input is removed; they sort after their inputs and before every newer segment
  /// (`SegmentOrder`), so with or without the inputs the store opens to the same contents.
  ///
  /// A live record that is damaged (or is not the record its key message was sealed for) is
  /// never dropped silently: by default the compaction stops at the end of its copy with
  /// `.corrupt`, and nothing changes. Only with `droppingDamagedRecords` are such records left
  /// out, their keys removed, and each listed in the report's `damagedRecords`.
  ///
  /// - Parameter droppingDamagedRecords: whether to salvage around damaged live records
  ///   (their keys are lost) instead of stopping.
  /// - Returns: what was done, or `nil` if there was nothing to compact.
  /// - Throws: `.corrupt` when a live record is damaged and `droppingDamagedRecords` is false;
  ///   `.readOnly`, `.closed`, `.io`. A failed compaction leaves the store's contents as they
  ///   were; if removing its partial output fails too, the store refuses writes until it is
  ///   reopened (open then sees every file).
  /// - Complexity: O(live bytes) of I/O, O(live keys) of short index lookups.
  @discardableResult
  public func compact(droppingDamagedRecords: Bool = false) throws -> CompactionReport? {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("compact")
    return try compactionLock.run { try runCompaction(droppingDamagedRecords: droppingDamagedRecords) }
  }

  /// The automatic compaction, run on a thread of its own (`BackgroundWork`): as `compact()`,
  /// but of the sealed segments only, as Bitcask merges only immutable files. The active
  /// segment is left to the writer, who never waits for more than the lock taken to read
  /// which segment it is and the short index and manifest steps `compact()` has too. It is
  /// sealed only when a rotation of older key epochs is due (`rotateKeys()`) or no order
  /// is left between it and the sealed segments (`Compactor.init`). Its thread's nice value is
  /// raised by `niceIncrement` for the rest of its work once any seal is done, and stays so
  /// until the thread ends with it.
  func compactAutomatically(niceIncrement: Int32) throws {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("compact")
    _ = try compactionLock.run {
      try runCompaction(droppingDamagedRecords: false, sealingActive: hasOlderKeyEpochs, niceIncrement: niceIncrement)
    }
  }

  /// Live and dead bytes of the sealed segments (all but the active one): what an automatic
  /// compaction reads and what it frees.
  func sealedSegmentUsage() -> (live: UInt64, dead: UInt64) {
    let active = writer.withLock { $0.active?.segment.id }
    return state.withLock { $0.directory.usage { $0 != active } }
  }

  /// Waits for a running compaction to finish.
  func waitForCompaction() {
    compactionLock.run {}
  }

  private func runCompaction(
    droppingDamagedRecords: Bool, sealingActive: Bool = true, niceIncrement: Int32 = 0
  ) throws -> CompactionReport? {
    guard var compactor = try Compactor(store: self, sealingActive: sealingActive) else { return nil }
    // After the seal, not before. Prevents: the writer lock held by a thread that the kernel
    // runs a tenth as often while every write waits for it.
    if niceIncrement > 0 { Syscall.lowerThreadPriority(by: niceIncrement) }
    do {
      try compactor.copyLiveRecords()
      if !droppingDamagedRecords, let first = compactor.damaged.first {
        let more = compactor.damaged.count > 1 ? " (and \(compactor.damaged.count - 1) more)" : ""
        throw CaskError.corrupt(
          file: first.region.file, offset: first.region.offset,
          reason: "a live record is damaged: \(first.region.reason)\(more); compaction stopped and changed nothing")
      }
      // Every write that left an input's record uncopied (an overwrite or a delete in the
      // active segment) is on disk before the record can go. Prevents: after a crash that
      // loses the active segment's unsynced tail under `.never`, a key with neither its old
      // value (not copied, its input removed) nor the newer one.
      try syncActiveSegmentAhead()
      try compactor.installOutputs()
    } catch {
      compactor.removeOutputs()
      throw error
    }
    compactor.repointIndex()
    // The outputs listed, the inputs retired, before any input goes. If that fails, the inputs
    // stay (entirely dead) and the manifest before is still true.
    let outputs = compactor.outputs.map(\.segment.id)
    let listed: Bool = writer.withLock { writer in
      defer { for id in outputs { writer.pendingOutputs[id] = nil } }
      return (try? writeManifest(&writer, retiring: compactor.inputs.map(\.id))) != nil
    }
    if listed || !compactor.cipher.bindsRecords { compactor.removeInputs() }
    if listed {
      // The inputs under older key epochs are gone: their keys leave the header, and an old
      // header opens nothing current. A failure leaves them there, unused, for the next
      // writable open or compaction to drop.
      writer.withLock { writer in
        do {
          try trimKeyRing(&writer)
        } catch {
          keepBackgroundFailure(error, operation: "write header")
        }
      }
    }
    return compactor.report
  }
}

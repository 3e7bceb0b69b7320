import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension CaskStore {
  /// The last failure (a full disk, say), since the store was opened, of a write that follows
  /// durable writes and only speeds up or describes them: a hint file, the manifest written
  /// when a segment is sealed or the store closes, the header rewritten at the end of a key
  /// rotation, a checkpoint. `nil` when there was none. It cost nothing written: a segment
  /// without its hint is scanned at the next open, an older manifest or checkpoint stays true,
  /// and open checks whatever it finds against the log. A hint of a segment that filled up,
  /// and a checkpoint, are written in the background, so their failure shows here a little
  /// after the write that caused them, and for certain once `close()` returned. `close()` does
  /// not throw it; still readable after `close()`.
  public var backgroundWriteFailure: CaskError? { backgroundFailure.withLock { $0 } }

  /// The former name of `backgroundWriteFailure`, which holds more than hint failures.
  @available(*, deprecated, renamed: "backgroundWriteFailure")
  public var hintWriteFailure: CaskError? { backgroundWriteFailure }

  /// Keeps `error`, the failure of a write that cost nothing written (a manifest, a header),
  /// for `backgroundWriteFailure` instead of throwing it.
  func keepBackgroundFailure(_ error: any Error, operation: String) {
    backgroundFailure.withLock { $0 = CaskError.converting(error, operation: operation, path: path) }
  }

  /// Syncs, writes the hint of the segment being appended to (a hint that cannot be written
  /// is not an error: `backgroundWriteFailure`), releases the in-memory index
  /// (every key, in plain text) and the lock. Later calls throw `CaskError.closed`, except
  /// the ones that cannot throw: `count`, `stats()` (and a collection's `count`) then report
  /// an empty store, so read them before closing. Called by `deinit` if you do not.
  ///
  /// A `close()` made while another runs returns when that one has finished (the lock
  /// released), and every `close()` after a failed one throws its error; one made from an
  /// `onClose` callback of this close returns at once.
  public func close() throws {
    try userCode.refuse("close")
    let current = pthread_self()
    guard !closing.withLock({ $0.thread.map { pthread_equal($0, current) != 0 } ?? false }) else { return }
    try closeSection.run {
      closing.withLock { $0.thread = current }
      defer { closing.withLock { $0.thread = nil } }
      do {
        try closeOnce()
      } catch {
        closing.withLock { $0.failure = error }
        throw error
      }
    }
  }

  private func closeOnce() throws {
    background.stop()
    waitForCompaction()
    let firstClose = writer.withLock { writer -> Bool in
      defer { writer.closed = true }
      return !writer.closed
    }
    guard firstClose else {
      if let failure = closing.withLock({ $0.failure }) { throw failure }
      return
    }
    // After the writer lock: every commit has notified its observers, and none will again.
    observers.closeAll()
    var failure: Error?
    if !options.readOnly {
      do {
        let wrote = try writer.withLock { writer in try sealForClose(&writer) }
        // The hints of segments that filled up before: written before the directory sync
        // below, so that a clean close leaves every sealed segment with its hint.
        hintQueue.drain()
        if wrote { try fileSystem.syncDirectory(path) }
      } catch {
        failure = error
      }
    }
    hintQueue.drain()
    releaseResources()
    if let failure { throw failure }
  }

  /// Close's writes, under the writer lock: seals the active segment, then writes the final
  /// manifest and checkpoint.
  ///
  /// - Returns: whether anything was written (nothing when the store is untouched since open).
  /// - Throws: an earlier sync's failure, or the seal's; a failed manifest or checkpoint is
  ///   kept (`backgroundWriteFailure`), not thrown.
  private func sealForClose(_ writer: inout WriterState) throws -> Bool {
    // An earlier failure (a sync the periodic syncer or another writer saw fail) means
    // writes acknowledged since the last good sync may not be on disk: close says so
    // rather than return as if it had synced them.
    try writer.throwIfFailed()
    // Untouched since open: the hints and the manifest on disk describe the store already.
    if writer.untouchedSinceOpen {
      // A checkpoint open could not use (one of an older layout, say) is replaced, or a store
      // that is only read from would read every hint at every open until its next write.
      if state.withLock({ $0.recovery.checkpointIgnored != nil }) { takeCheckpoint(writer: &writer, closing: true) }
      writer.active = nil
      return false
    }
    // Sealed as when it fills up: a failed sync becomes the writer's failure (a writer
    // that appended before close and waits after it gets that error), a good one marks
    // everything durable.
    let last = writer.active
    let sealed = last.map { (segment: $0.segment, end: $0.end, tombstones: $0.tombstones) }
    if let last { try seal(last, writer: &writer) }
    // Every segment at its final length, the last one still listed as active: nothing can be
    // cut unnoticed, and the first write after the next open appends to it without writing a
    // manifest (its hint, which states this length, is not trusted once it grows). A failure
    // leaves the manifest before, which stays true (see `ensureRoom`).
    do {
      try writeManifest(&writer, listingActive: last)
      // After the manifest, whose generation it binds; written before the hint queue drains.
      takeCheckpoint(writer: &writer, sealed: sealed, closing: true)
    } catch {
      keepBackgroundFailure(error, operation: "write manifest")
    }
    return true
  }

  /// Drops the active segment, the index (every key, in plaintext), the open segments and
  /// the record cache, and releases the `flock`.
  private func releaseResources() {
    writer.withLock { $0.active = nil }
    state.withLock { state in
      state.closed = true
      state.segments.removeAll()
      // The index holds every key in plaintext: released now, not when the last reference
      // to the store goes (its memory is freed, not wiped).
      state.directory = KeyDirectory()
    }
    recordCache?.removeAll()
    fileLock.withLock { held in
      held?.unlock()
      held = nil
    }
  }
}

import Foundation

#if canImport(Glibc)
  import Glibc
#endif

extension CaskStore {
  /// Seals the active segment and starts a new one if `length` more bytes would not fit.
  /// A batch larger than the limit gets a segment of its own.
  func ensureRoom(for length: UInt64, writer: inout WriterState) throws {
    writer.untouchedSinceOpen = false
    let limit = min(options.segmentSizeLimit, CaskFormat.maximumSegmentLength)
    let header = writer.active?.segment.recordsStart ?? newSegmentRecordsStart
    // Offsets are 32-bit: a batch must fit in an empty segment.
    guard header + length <= CaskFormat.maximumSegmentLength else {
      throw CaskError.valueTooLarge(length: Int(length), maximum: Int(CaskFormat.maximumSegmentLength - header))
    }
    // The active segment's end read in place. Prevents: a copy of the segment's state (a
    // retain and a release of its file and tombstones) on every append.
    if let end = writer.active?.end {
      if end + length <= limit || (end == header && end + length <= CaskFormat.maximumSegmentLength) {
        try resumeAppending(writer: &writer)
        return
      }
      if let active = writer.active { try roll(active, writer: &writer) }
      return
    }
    try startSegment(writer: &writer)
  }

  /// Before the first append to a segment that open resumed as a clean close left it. Its
  /// hint, which states the segment's length, is stale once the segment grows, and open never
  /// trusts a hint whose length is not the segment's: it stays where it is until the segment's
  /// next hint (its seal, or close) is renamed over it, and the manifest, which lists the
  /// segment as active, stays as it is (Docs/FORMAT.md, "Opening a store", step 9). Prevents:
  /// the first writes after open running beside the file system freeing a large hint's blocks
  /// and cached pages (tens of milliseconds of kernel time for a 71 MB hint, on a thread of its
  /// own that the writes then shared the cores with). A store closed by an older version lists
  /// the segment as sealed: its hint goes and the manifest lists it as active first, so that a
  /// crash after the append leaves a longer segment the manifest allows.
  ///
  /// - Throws: for a segment the manifest lists as sealed, the manifest's write error;
  ///   nothing is appended then, and the next append tries again.
  func resumeAppending(writer: inout WriterState) throws {
    if writer.active?.hintCoversEnd == true { writer.active?.hintCoversEnd = false }
    guard writer.active?.sealedOnDisk == true, let id = writer.active?.segment.id else { return }
    try resumeSealedSegment(id: id, writer: &writer)
  }

  /// The first append to a segment the manifest lists as sealed: its hint out, then the
  /// manifest listing it as active.
  private func resumeSealedSegment(id: UInt32, writer: inout WriterState) throws {
    var stale = try retireHint(of: id)
    // Removed once the manifest's syncs are done, success or not (the renamed file is no
    // part of the store either way). Prevents: those syncs waiting for the journal to free
    // the hint's blocks (52 ms for a 71 MB hint, when the removal ran beside them).
    defer {
      if let stale {
        let fileSystem = self.fileSystem
        hintQueue.submit { try? fileSystem.removeFile(stale) }
      }
    }
    writer.active?.sealedOnDisk = false
    do {
      try writeResumedManifest(&writer)
    } catch {
      // On a full disk the retired hint's blocks may be the room the manifest needs: freed
      // now, and the manifest tried once more. Prevents: a store on a full disk refusing the
      // write that its own stale hint had room for.
      guard let retired = stale, (try? fileSystem.removeFile(retired)) != nil else {
        writer.active?.sealedOnDisk = true
        throw error
      }
      stale = nil
      do {
        try writeResumedManifest(&writer)
      } catch {
        writer.active?.sealedOnDisk = true
        throw error
      }
    }
  }

  /// The manifest that lists the resumed segment as active; a version 2 store has no
  /// manifest, and the directory sync makes the hint's removal durable instead.
  private func writeResumedManifest(_ writer: inout WriterState) throws {
    if try writeManifest(&writer) == nil { try fileSystem.syncDirectory(path) }
  }

  /// Takes the hint of segment `id` out of the store before the segment grows: renamed to a
  /// `.tmp` name (one directory entry changed), which open never reads and a writable open
  /// removes; the caller removes the file off the writer's thread. The manifest written next
  /// (its directory sync) makes the rename durable, as it made an unlink. Prevents: the first
  /// write after open waiting while the file system frees a large hint's blocks and cached
  /// pages (58 ms for a 71 MB hint, most of that write's time).
  ///
  /// - Returns: the hint's new path, `nil` when there was none.
  func retireHint(of id: UInt32) throws -> String? {
    let hint = "\(path)/\(Segment.hintName(id: id))"
    guard fileSystem.fileKind(hint) != .missing else { return nil }
    let stale = hint + CaskFormat.staleHintSuffix
    try fileSystem.rename(hint, to: stale)
    return stale
  }

  /// Seals `active` (its hint written in the background) and starts the next segment.
  func roll(_ active: ActiveSegment, writer: inout WriterState) throws {
    try seal(active, writer: &writer, hintInBackground: true)
    try startSegment(writer: &writer)
    // The sealed segment's final length, and the new active segment. A failure (a full
    // disk) is kept like a hint's: the manifest before stays true (it lists the sealed
    // segment as active with a length it has reached, and the new one is above its ids).
    do {
      try writeManifest(&writer)
    } catch {
      keepBackgroundFailure(error, operation: "write manifest")
      return
    }
    takeCheckpoint(writer: &writer)
  }

  /// Syncs the active segment without the writer lock, before a seal that would otherwise
  /// write all of its unsynced bytes out while holding it: the seal's own sync then has only
  /// what was appended in between to write. Prevents: every write waiting for the active
  /// segment's unsynced bytes to reach the disk (0.19 s for the tombstones and puts of a run
  /// of deletes under `.never`, when that run set off an automatic compaction).
  ///
  /// - Throws: the sync's error, after marking the writer failed as a failed seal does (what
  ///   reached the disk is unknown).
  func syncActiveSegmentAhead() throws {
    guard let file = writer.withLock({ $0.active?.segment.file }) else { return }
    do {
      try groupCommit.sync(file)
    } catch {
      writer.withLock { writer in
        writer.failure = writer.failure ?? CaskError.converting(error, operation: "fdatasync", path: file.path)
      }
      throw error
    }
  }

  /// Syncs a full segment and writes its hint; everything written so far is then durable.
  ///
  /// - Parameter hintInBackground: the hint's entries are taken now, and the hint is encoded,
  ///   sealed and written on `hintQueue` (`close()` waits for it).
  /// - Returns: the hint made for the segment (its entries as the index held them), `nil`
  ///   when the segment gets none (its damage stays for the next open to report).
  @discardableResult
  func seal(_ active: ActiveSegment, writer: inout WriterState, hintInBackground: Bool = false) throws -> HintFile? {
    var active = active
    do {
      try releaseReservedSpace(of: &active)
      try groupCommit.sync(active.segment.file)
    } catch {
      // What reached the disk is unknown: stop writing until the store is reopened.
      writer.failure = CaskError.converting(error, operation: "fdatasync", path: active.segment.path)
      throw error
    }
    groupCommit.markDurable(writer.ticket)
    // Synced at its final length: the segment the next one links to.
    writer.chainTip = active.segment
    let hint = hint(for: active)
    if let hint {
      let cipher = active.segment.cipher
      let hintWriter = HintWriter(directory: path, fileSystem: fileSystem, failure: backgroundFailure)
      if hintInBackground {
        hintQueue.submit { hintWriter.write(hint, cipher: cipher) }
      } else {
        hintWriter.write(hint, cipher: cipher)
      }
    }
    writer.active = nil
    return hint
  }

  /// Creates the next segment file (header written and synced, then renamed into place).
  func startSegment(writer: inout WriterState) throws {
    let id = try allocateSegmentID(&writer)
    let link = try keyRing.withLock { $0.identity }.map { identity in
      SegmentLink(identity: identity, previous: try writer.chainTip.map(SegmentLink.predecessor))
    }
    let segment = try createSegment(id: id, order: SegmentOrder(base: id, sub: 0), link: link)
    writer.active = ActiveSegment(
      segment: segment, end: segment.recordsStart, tombstones: HintEntries(), maxSequence: 0)
    state.withLock { $0.segments[id] = segment }
  }

  /// Where a segment this store starts now has its first record: after the link in a version
  /// 5 store.
  var newSegmentRecordsStart: UInt64 { Segment.recordsStart(linked: keyRing.withLock { $0.identity } != nil) }

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

  /// Creates a segment file with its header (and `link`, in a version 5 store), synced and
  /// visible under its final name, under the current key epoch.
  func createSegment(id: UInt32, order: SegmentOrder, link: SegmentLink?) throws -> Segment {
    let cipher = self.cipher
    let finalPath = "\(path)/\(Segment.fileName(id: id))"
    let temporary = finalPath + CaskFormat.temporarySuffix
    try? fileSystem.removeFile(temporary)
    let file = try fileSystem.open(temporary, mode: .createNew)
    do {
      try file.write(try Segment.encodeHeader(id: id, order: order, cipher: cipher, link: link), at: 0)
      try file.sync()
      try fileSystem.rename(temporary, to: finalPath)
      try fileSystem.syncDirectory(path)
    } catch {
      file.close()
      try? fileSystem.removeFile(temporary)
      throw error
    }
    return Segment(id: id, order: order, file: file, cipher: cipher, link: link)
  }

  /// The hint of a segment being sealed, its entries not yet in record order (`write` sorts
  /// them); `nil` for one in which open found damage that stays (it gets none, so that every
  /// open scans it and reports the damage again), and while the index is damaged (a hint
  /// made from it could leave out live keys: the next open scans the segment instead).
  ///
  /// The hint lists the segment's live records (from the index, as they are now: a later
  /// overwrite in another segment is applied after it at open) and its tombstones; records
  /// already overwritten are left out (open counts their bytes as dead).
  ///
  /// - Complexity: O(n) in the number of keys, once per sealed segment.
  func hint(for active: ActiveSegment) -> HintFile? {
    guard !active.keepsDamage else { return nil }
    let listed = state.withLock { state -> HintEntries? in
      let entries = state.directory.hintEntries(inSegment: active.segment.id)
      return state.directory.damage == nil ? entries : nil
    }
    guard var entries = listed else { return nil }
    entries.append(contentsOf: active.tombstones)
    return HintFile(
      segmentID: active.segment.id, segmentLength: active.end, maxSequence: active.maxSequence,
      entries: entries)
  }
}

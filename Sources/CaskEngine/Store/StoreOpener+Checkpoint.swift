import Foundation
import RNCryptorCodec

/// Loading the checkpoint at open (Docs/FORMAT.md, section 11, step 5b, and section 18): the
/// key directory as of a place in the log, trusted only when it matches the log found.
extension StoreOpener {
  /// A checkpoint that matched the log, its entries loaded into the index.
  struct LoadedCheckpoint {
    var root: Checkpoint
    /// The covered segment's tombstones up to the covered offset.
    var tombstones: HintEntries
    /// The ids of the segments it describes.
    var listed: Set<UInt32>
  }

  /// Step 5b (`listed`: the directory's listing holds `CHECKPOINT`): reads and checks the
  /// checkpoint's root and, if it matches the segments found and the manifest, makes
  /// `indexState.directory` (which must be empty) its tables, whose slot pages load when first
  /// touched (the file stays open for them). Otherwise leaves the index empty and records why
  /// in `checkpointIgnored`.
  ///
  /// - Returns: the checkpoint loaded, or `nil` (none, or ignored).
  func loadCheckpoint(
    found: [FoundSegment], manifest: Manifest, ring: KeyRing, header: StoreHeader?, listed: Bool,
    indexState: inout CaskStore.IndexState
  ) -> LoadedCheckpoint? {
    let checkpointPath = "\(path)/\(CaskFormat.checkpointFileName)"
    // The directory's listing, read under the lock, says whether there is one; opening it
    // refuses anything but a regular file (no symbolic link is followed).
    guard listed else { return nil }
    do throws(Checkpoint.Rejection) {
      guard let file = try? fileSystem.open(checkpointPath, mode: .readOnly) else {
        throw Checkpoint.Rejection(reason: "not a regular file")
      }
      var keepsFile = false
      defer { if !keepsFile { file.close() } }
      // A planted sparse file costs nothing: the pages are read one at a time, each bounded.
      guard let size = try? file.size(), file.nextHole(from: 0, size: size) >= size else {
        throw Checkpoint.Rejection(reason: "the file has a hole")
      }
      let read = { (offset: UInt64, count: Int) -> [UInt8]? in
        guard let bytes = try? file.read(count: count, at: offset), bytes.count == count else { return nil }
        return Array(bytes)
      }
      let cipher = ring.current
      let root = try Checkpoint.readRoot(size: size, cipher: cipher, read: read)
      if options.checksCheckpoint { try check(root, found: found, manifest: manifest, cipher: cipher, header: header) }
      let pages = CheckpointPages(
        root: root, cipher: cipher, path: checkpointPath, read: read, closeFile: { file.close() },
        removeFile: options.readOnly ? nil : { [fileSystem] in try? fileSystem.removeFile(checkpointPath) })
      keepsFile = true
      let cache = SortedPageCache(
        limit: options.checkpoints?.sortedPageCacheBytes ?? CaskFormat.defaultSortedPageCacheBytes)
      var (directory, tombstones) = try root.load(from: pages, cache: cache)
      directory.setSortedGroups(root.sortedBases(pages: pages, cache: cache), cache: cache)
      directory.restoreUsage(root.segments)
      indexState.directory = directory
      return LoadedCheckpoint(root: root, tombstones: tombstones, listed: Set(root.segments.map(\.id)))
    } catch {
      indexState.recovery.checkpointIgnored = error.reason
      return nil
    }
  }

  /// Removes, from a writable store, the `CHECKPOINT` open found and did not use, before
  /// anything is appended. Prevents: its check compares the log's lengths and the manifest's
  /// generation, which the log written from here on can catch up with, other records in it,
  /// so that a later open would trust a checkpoint ahead of a log rolled back.
  func removeUnusedCheckpoint() throws {
    guard !options.readOnly else { return }
    try fileSystem.removeFile("\(path)/\(CaskFormat.checkpointFileName)")
    try fileSystem.syncDirectory(path)
  }

  /// Whether a checkpoint's root describes this store at a time the log reaches: the same
  /// store and key epoch, a manifest generation not ahead of the manifest's, every segment it
  /// lists present with its order, epoch and exact length (the covered one at least as
  /// long), and every other segment newer than the covered one.
  ///
  /// - Throws: `Rejection` naming the first disagreement.
  private func check(
    _ root: Checkpoint, found: [FoundSegment], manifest: Manifest, cipher: RecordCipher, header: StoreHeader?
  ) throws(Checkpoint.Rejection) {
    guard root.recordVersion == cipher.version, root.epoch == cipher.epoch else {
      throw Checkpoint.Rejection(reason: "written under another key epoch or format version")
    }
    guard let header, let identity = Checkpoint.identity(of: header),
      constantTimeEqual(identity, root.identity)
    else { throw Checkpoint.Rejection(reason: "written for another store or header") }
    guard root.generation <= manifest.generation else {
      throw Checkpoint.Rejection(reason: "ahead of the manifest (a manifest rolled back)")
    }
    // Positions in `found` sorted by id (the first for an id), not a dictionary by id: a
    // generic type of its own, whose metadata a process makes at its first open.
    let byID = found.indices.sorted { (found[$0].segment.id, $0) < (found[$1].segment.id, $1) }
    func position(of id: UInt32) -> Int? {
      let at = SortedSegmentIDs.lowerBound(of: id, in: byID.count) { found[byID[$0]].segment.id }
      return at < byID.count && found[byID[at]].segment.id == id ? byID[at] : nil
    }
    for listed in root.segments {
      guard let segment = position(of: listed.id).map({ found[$0] }), segment.segment.order == listed.order,
        segment.segment.epoch == listed.epoch
      else { throw Checkpoint.Rejection(reason: "a segment it describes is gone or replaced") }
      if listed.id == root.coveredSegment {
        guard segment.length >= listed.length else {
          throw Checkpoint.Rejection(reason: "ahead of the log (the log is shorter than it covers)")
        }
      } else if segment.length != listed.length {
        throw Checkpoint.Rejection(reason: "a segment it describes changed length")
      }
    }
    guard let covered = root.segments.last else { return }
    for item in found where !root.segments.contains(where: { $0.id == item.segment.id }) {
      guard (item.segment.order, item.segment.id) > (covered.order, covered.id) else {
        throw Checkpoint.Rejection(reason: "a segment older than its newest is not in it")
      }
    }
  }

  /// Indexes the covered segment: the checkpoint holds it up to the covered offset, and
  /// the records after it (written since) are scanned, a torn tail cut as in any scan. Its
  /// tombstones, which its hint needs when it is sealed, are the checkpoint's and the scan's.
  func replay(
    _ segment: Segment, after checkpoint: LoadedCheckpoint, length: UInt64, isLast: Bool,
    into indexState: inout CaskStore.IndexState
  ) throws -> IndexedSegment {
    indexState.recovery.segmentsFromCheckpoint += 1
    let covered = checkpoint.root.coveredOffset
    var indexed: IndexedSegment
    if length > covered {
      indexed = try index(
        segment, byScanning: length, after: covered, isLast: isLast, cipher: segment.cipher, into: &indexState)
    } else {
      indexed = IndexedSegment(end: length)
      indexed.start = covered
      // As a clean close left it when its hint is there too (settle checks the manifest).
      indexed.fromHint = fileSystem.fileKind("\(path)/\(Segment.hintName(id: segment.id))") == .file
    }
    if isLast {
      var tombstones: [HintEntry] = []
      checkpoint.tombstones.forEachEntry { _, offset, length, key in
        tombstones.append(
          HintEntry(isDelete: true, offset: offset, length: length, key: String(decoding: key, as: UTF8.self)))
      }
      indexed.entries = tombstones + indexed.entries
    }
    indexed.maxSequence = max(indexed.maxSequence, checkpoint.root.lastSequence)
    return indexed
  }
}

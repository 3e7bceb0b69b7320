import Foundation
import RNCryptorCodec

/// Steps 4 to 8 of opening a store (FORMAT.md, "Opening a store"): clear what a crash left
/// half-written, find the segments and their order, and index each one.
extension StoreOpener {
  func loadSegments(ring: KeyRing, header: StoreHeader?) throws -> (
    CaskStore.IndexState, CaskStore.WriterState, Manifest?
  ) {
    let cipher = ring.current
    var indexState = CaskStore.IndexState()
    var writerState = CaskStore.WriterState()
    let names = try fileSystem.contentsOfDirectory(path)
    let removed = try removeLeftovers(names)
    var numbers = SegmentNumbers()
    var found = try findSegments(names, ring: ring, numbers: &numbers, report: &indexState.recovery)
    // 5a. Version 3: the files must be those the manifest lists. A version 2 store never
    // has a manifest: one there means the header's version was changed back.
    var manifest: Manifest?
    if !cipher.bindsRecords && fileSystem.fileKind("\(path)/\(CaskFormat.manifestFileName)") != .missing {
      indexState.recovery.integrityViolations.append(
        CorruptRegion(
          file: CaskFormat.headerFileName, offset: 0, length: 0,
          reason:
            "the header says format version \(cipher.version) beside a manifest, which only version 3 on "
            + "writes (a downgraded header)"))
    }
    if cipher.bindsRecords {
      do {
        manifest = try readManifest(ring: ring, listed: names.contains(CaskFormat.manifestFileName))
        found = try applyManifest(manifest, to: found, ring: ring, report: &indexState.recovery)
      } catch CaskError.integrityViolation(let file, let reason) {
        indexState.recovery.integrityViolations.append(CorruptRegion(file: file, offset: 0, length: 0, reason: reason))
      }
    }
    // Never reuse the number of any file that is around: a hint left behind by a crash must
    // not be taken for the hint of a new segment with the same number. (The files removed
    // in step 4 are gone for good: the directory was synced.)
    for name in names where !removed.contains(name) {
      let temporary = name.hasSuffix(CaskFormat.temporarySuffix)
      let stem = temporary ? String(name.dropLast(CaskFormat.temporarySuffix.count)) : name
      if let id = Segment.id(fromFileName: stem, extension: CaskFormat.segmentExtension) {
        numbers.reserve(id, for: name, isSegment: !temporary)
      } else if let id = Segment.id(fromFileName: stem, extension: CaskFormat.hintExtension) {
        numbers.reserve(id, for: name, isSegment: false)
      }
    }
    // The last number is never handed out, so a file named ffffffff cannot overflow it.
    writerState.nextSegmentID = numbers.maxID == UInt32.max ? UInt32.max : numbers.maxID + 1
    writerState.highestNumberHolder = numbers.highestNumberHolder
    // 5b. The checkpoint, when it matches the log, gives the index as of a place in it.
    var checkpoint: LoadedCheckpoint?
    if let manifest, indexState.recovery.integrityViolations.isEmpty, indexState.recovery.unreadableSegments.isEmpty {
      checkpoint = loadCheckpoint(
        found: found, manifest: manifest, ring: ring, header: header,
        listed: names.contains(CaskFormat.checkpointFileName), indexState: &indexState)
    }
    if checkpoint == nil, names.contains(CaskFormat.checkpointFileName) { try removeUnusedCheckpoint() }
    try indexSegments(
      found, checkpoint: checkpoint, currentEpoch: cipher.epoch, identity: ring.identity, indexState: &indexState,
      writerState: &writerState)
    if let manifest {
      // Sequence numbers never go down, even when compaction dropped the newest records.
      if manifest.lastSequence < UInt64.max {
        writerState.nextSequence = max(writerState.nextSequence, manifest.lastSequence + 1)
      }
      writerState.manifestGeneration = manifest.generation
      writerState.nextSegmentID = max(writerState.nextSegmentID, manifest.nextSegmentID)
    }
    if let token = options.expectedIntegrityToken {
      do {
        guard cipher.bindsRecords else {
          throw CaskError.integrityViolation(
            file: CaskFormat.headerFileName, reason: "a version 2 store has no integrity token")
        }
        try CaskStore.checkFreshness(
          token, generation: writerState.manifestGeneration, lastSequence: writerState.nextSequence - 1, ring: ring)
      } catch CaskError.integrityViolation(let file, let reason) {
        indexState.recovery.integrityViolations.append(CorruptRegion(file: file, offset: 0, length: 0, reason: reason))
      }
    }
    let violations = indexState.recovery.integrityViolations
    if let first = violations.first, !options.allowIntegrityViolations {
      throw CaskError.integrityViolation(
        file: first.file,
        reason: first.reason + (violations.count > 1 ? " (and \(violations.count - 1) more)" : ""))
    }
    return (indexState, writerState, manifest)
  }

  /// Step 4: removes what a crash left half-written (never a finished file), and the hints
  /// whose segment is gone (compaction removed it, or a crash).
  ///
  /// - Returns: the names removed.
  private func removeLeftovers(_ names: [String]) throws -> Set<String> {
    var removed: Set<String> = []
    guard !options.readOnly else { return removed }
    let segmentIDs = SortedSegmentIDs(
      names.compactMap { Segment.id(fromFileName: $0, extension: CaskFormat.segmentExtension) })
    for name in names {
      let orphanHint = Segment.id(fromFileName: name, extension: CaskFormat.hintExtension).map {
        !segmentIDs.contains($0)
      }
      guard name.hasSuffix(CaskFormat.temporarySuffix) || orphanHint == true else { continue }
      try fileSystem.removeFile("\(path)/\(name)")
      removed.insert(name)
    }
    // Durably gone, so their numbers can be handed out again.
    if !removed.isEmpty { try fileSystem.syncDirectory(path) }
    return removed
  }

  /// The file numbers in use, so that new segments get numbers above all of them.
  struct SegmentNumbers {
    var maxID: UInt32 = 0
    /// The file with the highest number (a segment rather than its hint), which the refusal
    /// names when no number is left above it.
    var highestNumberHolder: String?
    /// Whether `highestNumberHolder` is a segment's own name.
    private var holderIsSegment = false

    /// Reserves `id`, the number of the file `name` (`isSegment`: a segment, not its hint or
    /// a temporary file).
    mutating func reserve(_ id: UInt32, for name: String, isSegment: Bool) {
      if id > maxID || highestNumberHolder == nil || (id == maxID && isSegment && !holderIsSegment) {
        highestNumberHolder = name
        holderIsSegment = isSegment
      }
      maxID = max(maxID, id)
    }
  }

  /// Step 5: opens every segment, checks its header, and sorts them into history order.
  ///
  /// A segment of another format version than the store's is not read (reported as
  /// unreadable): a version 2 segment planted in a version 3 store would bring records that
  /// are not bound to their place. Neither is one under a key epoch the header's ring does not
  /// hold (reported as an integrity violation too, in a version 3 store): an old header opens
  /// nothing sealed after it.
  private func findSegments(
    _ names: [String], ring: KeyRing, numbers: inout SegmentNumbers, report: inout RecoveryReport
  ) throws -> [FoundSegment] {
    // A version 5 store's segments say 5 (their records are version 3) and carry a link.
    let version = ring.identity != nil ? CaskFormat.authenticatedVersion : ring.current.version
    var found: [FoundSegment] = []
    for name in names {
      if let id = Segment.id(fromForeignName: name, extension: CaskFormat.segmentExtension) {
        // Not written by the engine (upper case): reported, and its number never reused.
        numbers.reserve(id, for: name, isSegment: true)
        report.unreadableSegments.append(name)
        continue
      }
      guard let id = Segment.id(fromFileName: name, extension: CaskFormat.segmentExtension) else { continue }
      numbers.reserve(id, for: name, isSegment: true)
      let file = try fileSystem.open("\(path)/\(name)", mode: options.readOnly ? .readOnly : .readWrite)
      let fullLength = try file.size()
      // No valid segment is longer than 32-bit offsets reach; anything beyond is not read.
      let length = min(fullLength, CaskFormat.maximumSegmentLength)
      if fullLength > length {
        report.corruptRegions.append(
          CorruptRegion(
            file: name, offset: length, length: fullLength - length,
            reason: "segment longer than the format allows; the excess is ignored"))
      }
      let header = try file.read(
        upTo: CaskFormat.segmentHeaderLength + (ring.identity != nil ? CaskFormat.segmentLinkLength : 0), at: 0)
      switch Segment.decodeHeader(header) {
      case .success(let decoded) where decoded.id == id && decoded.version == version:
        // A base is a number handed out earlier (a writer's own id, or the newest input's for
        // a compaction output): new ids go above every base too, so that a segment started
        // after this open sorts after this one even if its header claims a base beyond the ids.
        numbers.reserve(decoded.order.base, for: name, isSegment: true)
        guard let cipher = ring.cipher(forEpoch: decoded.epoch) else {
          report.unreadableSegments.append(name)
          if ring.current.bindsRecords {
            report.integrityViolations.append(
              CorruptRegion(
                file: name, offset: UInt64(CaskFormat.segmentEpochOffset), length: 0,
                reason:
                  "the segment is sealed under key epoch \(decoded.epoch), which this header does not hold "
                  + "(an older header, or a planted segment)"))
          }
          continue
        }
        var link: SegmentLink?
        if ring.identity != nil {
          // Prevents: a segment's id, order or key epoch changed (its CRC fixed), or a link
          // forged, being followed.
          guard let authenticated = SegmentLink.decode(header, keys: cipher.keys) else {
            report.unreadableSegments.append(name)
            report.integrityViolations.append(
              CorruptRegion(
                file: name, offset: 0, length: 0,
                reason: "the segment's header does not authenticate (its order, number, key epoch or link was changed)")
            )
            continue
          }
          link = authenticated
        }
        found.append(
          FoundSegment(
            segment: Segment(id: id, order: decoded.order, file: file, cipher: cipher, link: link), length: length))
      case .success(let decoded) where decoded.id == id && decoded.version > version:
        // A version 2 header never had later segments beside it: the header was changed
        // back (its version field is not authenticated before format 5). Refused, never
        // followed: writes would go on without bindings and an upgrade would copy nothing.
        report.unreadableSegments.append(name)
        report.integrityViolations.append(
          CorruptRegion(
            file: name, offset: 0, length: 0,
            reason:
              "a version \(decoded.version) segment in a store whose header says version \(version) "
              + "(a downgraded header)"))
      case .failure(.unsupportedVersion(let version, let supported)):
        throw CaskError.unsupportedVersion(found: version, supported: supported)
      default:
        report.unreadableSegments.append(name)
      }
    }
    // Two segments with one (base, sub), which the engine never writes, go by file id: the
    // same order at every open, not the directory listing's.
    found.sort { ($0.segment.order, $0.segment.id) < ($1.segment.order, $1.segment.id) }
    return found
  }

  /// Steps 6 to 8: indexes each segment in order, from its hint when the hint is valid, else
  /// by scanning, and makes the last one the active segment while it has room.
  private func indexSegments(
    _ found: [FoundSegment], checkpoint: LoadedCheckpoint?, currentEpoch: UInt32, identity: [UInt8]?,
    indexState: inout CaskStore.IndexState, writerState: inout CaskStore.WriterState
  ) throws {
    var maxSequence = checkpoint?.root.lastSequence ?? 0
    // Size each table of the index once for the keys the hints claim for it (read from each
    // grouped hint's first blocks; each whole hint is read and authenticated below, one at a
    // time): growing a table key by key copies it again and again, and sizing the table of
    // keys outside groups for every key left a large table empty in a store of collections.
    // A hint without a group section sizes the tables for its own keys when it is read.
    indexState.directory.plan(
      HintSizes.total(
        found.compactMap {
          checkpoint?.listed.contains($0.segment.id) == true
            ? nil : claimedHintSizes(for: $0.segment, length: $0.length, cipher: $0.segment.cipher)
        }),
      growing: false
    )
    defer { indexState.directory.forgetPlans() }
    for (position, item) in found.enumerated() {
      let isLast = position == found.count - 1
      let segment = item.segment
      indexState.segments[segment.id] = segment
      let indexed: IndexedSegment
      if let checkpoint, checkpoint.listed.contains(segment.id) {
        guard segment.id == checkpoint.root.coveredSegment else {
          indexState.recovery.segmentsFromCheckpoint += 1
          continue
        }
        indexed = try replay(
          segment, after: checkpoint, length: item.length, isLast: isLast, into: &indexState)
      } else if let hint = loadHint(for: segment, length: item.length, cipher: segment.cipher) {
        indexed = try index(segment, from: hint, length: item.length, isLast: isLast, into: &indexState)
        if !hint.isGrouped && !options.readOnly {
          // A hint from before the group section: rewritten with one, so that the next open
          // sizes the tables for it up front (best effort, as any hint open writes).
          try? AtomicFile.write(
            hint.regrouped(cipher: segment.cipher), to: "\(path)/\(Segment.hintName(id: segment.id))",
            fileSystem: fileSystem, syncingDirectory: nil)
        }
      } else {
        indexed = try index(
          segment, byScanning: item.length, isLast: isLast, cipher: segment.cipher, into: &indexState)
      }
      maxSequence = max(maxSequence, indexed.maxSequence)
      // A hint leaves out records that were already overwritten when it was written.
      let recordBytes = indexed.end - min(indexed.end, indexed.start ?? segment.recordsStart)
      if recordBytes > indexed.listed {
        indexState.directory.addDeadBytes(recordBytes - indexed.listed, in: segment.id)
      }
      // 8. Keep appending to the last segment while it has room (and it is under the current
      // key epoch: a crash after a password change sealed it). Its hint goes before it grows
      // (`StoreOpener.open` or `CaskStore.resumeAppending`).
      // A version 5 store appends only to a segment it wrote itself (a backup's copy of the
      // original's segment is sealed for it).
      if isLast && appendsTo(segment, end: indexed.end) && segment.epoch == currentEpoch
        && segment.link?.identity == identity
      {
        writerState.active = CaskStore.ActiveSegment(
          segment: segment, end: indexed.end, tombstones: HintEntries(indexed.entries.filter(\.isDelete)),
          maxSequence: maxSequence)
        writerState.active?.keepsDamage = indexed.keepsDamage
        // Read from its hint, which a clean close wrote: open checks the manifest next.
        writerState.active?.hintCoversEnd = indexed.fromHint
      }
    }
    // A damaged or crafted sequence field (records are only CRC-protected) may claim the
    // largest sequence; appends then fail with `corrupt` instead of overflowing.
    writerState.nextSequence = maxSequence == .max ? .max : maxSequence + 1
    // The segment the next one started links to, unless the active one is sealed first.
    writerState.chainTip = found.last { $0.segment.order.sub == 0 }?.segment
  }

  /// Indexes a segment straight from its decrypted hint: no `String` for a key of up to 15
  /// bytes. In batches whose index slots are fetched together first (`KeyDirectory.apply(hintBatch:)`): a
  /// large index misses the cache on almost every key, and one miss at a time made the
  /// lookups most of open's time.
  private func index(
    _ segment: Segment, from hint: HintPayload, length: UInt64, isLast: Bool,
    into indexState: inout CaskStore.IndexState
  ) throws -> IndexedSegment {
    var indexed = IndexedSegment(end: length, maxSequence: hint.maxSequence)
    indexed.fromHint = true
    indexState.recovery.segmentsFromHints += 1
    // A hint written before the group section: its keys, counted by group when it was
    // authenticated, size the tables now.
    if !hint.isGrouped { indexState.directory.plan(hint.sizes, growing: true) }
    try hint.forEachBatch(of: KeyDirectory.hintBatch) { batch in
      for entry in batch { indexed.listed += UInt64(entry.length) }
      let keepTombstone = { (entry: HintPayload.EntryView) in
        guard isLast else { return }
        indexed.entries.append(
          HintEntry(
            isDelete: true, offset: entry.offset, length: entry.length, key: String(decoding: entry.key, as: UTF8.self))
        )
      }
      guard indexState.needsAttachedReplay(batch) else {
        return indexState.directory.apply(hintBatch: batch, segment: segment.id, onDelete: keepTombstone)
      }
      for entry in batch {
        if entry.isDelete { keepTombstone(entry) }
        indexState.apply(
          isDelete: entry.isDelete, key: entry.key, attached: entry.attached,
          at: RecordLocation(segment: segment.id, offset: entry.offset, length: entry.length))
      }
    }
    return indexed
  }

  /// Indexes a segment without a usable hint by scanning its records; cuts a torn tail or
  /// reserved zeros off the last segment (step 7) and writes the hint of a sealed one.
  func index(
    _ segment: Segment, byScanning length: UInt64, after checkpointEnd: UInt64? = nil, isLast: Bool,
    cipher: RecordCipher, into indexState: inout CaskStore.IndexState
  ) throws -> IndexedSegment {
    let start = checkpointEnd ?? segment.recordsStart
    // Only an ordinary segment (order sub 0) is appended to, so only it can end in reserved zeros.
    let scanned = try scan(
      segment, length: length, from: start, allowsReserved: isLast && segment.order.sub == 0, cipher: cipher,
      report: &indexState.recovery)
    var indexed = IndexedSegment(entries: scanned.entries, end: length, maxSequence: scanned.maxSequence)
    indexed.start = start
    let partial = checkpointEnd != nil
    if !partial { indexState.recovery.segmentsScanned += 1 }
    if scanned.outcome.reservedBytes > 0 {
      // 7. The zeros a writer under `.always` reserved ahead of itself: not damage, and
      // nothing was written there. Cut, so the file ends at its last record again.
      if !options.readOnly {
        try segment.file.truncate(to: scanned.outcome.validEnd)
        try segment.file.sync()
      }
      indexed.end = scanned.outcome.validEnd
      indexState.recovery.zeroTailBytes += scanned.outcome.reservedBytes
    }
    if scanned.outcome.hasTornTail {
      if isLast && !options.readOnly {
        // 7. Cut the torn tail of the last segment so appends resume on a record boundary.
        try segment.file.truncate(to: scanned.outcome.validEnd)
        try segment.file.sync()
        indexed.end = scanned.outcome.validEnd
      }
      if isLast {
        indexState.recovery.truncatedBytes += scanned.outcome.tailBytes
      } else {
        indexState.recovery.corruptRegions.append(
          CorruptRegion(
            file: Segment.fileName(id: segment.id), offset: scanned.outcome.validEnd,
            length: scanned.outcome.tailBytes, reason: "damaged tail of a sealed segment"))
      }
    }
    // Damage that stays in the segment (anything but a cut tail) gets no hint, so that every
    // open scans the segment and reports it, until a compaction rewrites the segment.
    indexed.keepsDamage = scanned.keepsDamage
    // A scan from the checkpoint's end saw only part of the segment: no hint from it.
    if !partial && !(isLast && appendsTo(segment, end: indexed.end)) && !options.readOnly
      && !scanned.keepsDamage && !scanned.outcome.hasTornTail && scanned.outcome.reservedBytes == 0
    {
      // A sealed segment (also the last one, when full) whose hint was lost or is stale:
      // write it now so the next open is fast and no stale hint is left behind.
      try? HintFile(
        segmentID: segment.id, segmentLength: length, maxSequence: scanned.maxSequence, entries: scanned.entries
      ).write(in: path, fileSystem: fileSystem, cipher: cipher)
    }
    let kept = indexState.apply(scanned: scanned.entries, segment: segment.id, keepingEntries: isLast)
    indexed.listed += scanned.entries.reduce(0) { $0 + UInt64($1.length) }
    if isLast { indexed.entries = kept }
    return indexed
  }
}

import Foundation
import RNCryptorCodec

/// Opens a store directory: the recovery steps of Docs/FORMAT.md, "Opening a store", in order.
struct StoreOpener {
  let path: String
  let credential: StoreCredential
  let options: CaskStore.Options
  var fileSystem: any FileSystem { options.fileSystem }

  struct Opened {
    var cipher: RecordCipher
    var lock: any FileLock
    var indexState: CaskStore.IndexState
    var writerState: CaskStore.WriterState
  }

  /// A segment found on disk, before it is indexed.
  private struct FoundSegment {
    var segment: Segment
    var length: UInt64
  }

  func open() throws -> Opened {
    // 1. The directory must exist (or be creatable) and be a directory.
    switch fileSystem.fileKind(path) {
    case .file:
      throw CaskError.notACaskStore(path: path)
    case .missing:
      guard options.createIfMissing, !options.readOnly else { throw CaskError.notACaskStore(path: path) }
      var created: [String] = []
      try Self.createDirectoryDurably(path, fileSystem: fileSystem, created: &created)
    case .directory:
      break
    }
    let headerPath = "\(path)/\(CaskFormat.headerFileName)"
    if fileSystem.fileKind(headerPath) == .missing {
      // An empty directory becomes a store; anything else is not ours to write into.
      // (A header left as CASK.tmp by a crash during creation does not make it foreign.)
      let names = try fileSystem.contentsOfDirectory(path).filter {
        $0 != CaskFormat.lockFileName && $0 != CaskFormat.headerFileName + CaskFormat.temporarySuffix
      }
      guard names.isEmpty, options.createIfMissing, !options.readOnly else {
        throw CaskError.notACaskStore(path: path)
      }
    }

    // 2. Lock: exclusive for a writer, shared for read-only openers.
    let lock = try fileSystem.lock("\(path)/\(CaskFormat.lockFileName)", exclusive: !options.readOnly)
    do {
      // 3. Read the header and unwrap the data key, or create both for a new store.
      let dataKeys: RNCryptor.Keys
      if fileSystem.fileKind(headerPath) == .missing {
        dataKeys = try createHeader(at: headerPath)
      } else {
        let file = try fileSystem.open(headerPath, mode: .readOnly)
        defer { file.close() }
        let bytes = try file.read(count: Int(try file.size()), at: 0)
        let header = try StoreHeader.decode(bytes, path: headerPath)
        dataKeys = try credential.unwrap(header, path: headerPath)
      }
      let cipher = RecordCipher(keys: dataKeys)
      var (indexState, writerState) = try loadSegments(cipher: cipher)
      indexState.closed = false
      writerState.closed = false
      return Opened(cipher: cipher, lock: lock, indexState: indexState, writerState: writerState)
    } catch {
      lock.unlock()
      throw error
    }
  }

  /// The directory that holds `path` ("." for a bare name).
  /// Creates the directory `path` and every missing parent, and syncs the parent of each one
  /// created: a directory is an entry of its parent, and without that sync a crash can take
  /// it, and every file written in it, away.
  ///
  /// - Parameter created: receives the directories to create, deepest first, before they
  ///   are made, so that a caller can remove them also when this throws part-way.
  static func createDirectoryDurably(_ path: String, fileSystem: any FileSystem, created: inout [String]) throws {
    var missing = path
    while fileSystem.fileKind(missing) == .missing {
      created.append(missing)
      let parent = parentDirectory(of: missing)
      guard parent != missing else { break }
      missing = parent
    }
    try fileSystem.createDirectory(path)
    for directory in created { try fileSystem.syncDirectory(parentDirectory(of: directory)) }
  }

  static func parentDirectory(of path: String) -> String {
    var trimmed = Substring(path)
    while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
    guard let slash = trimmed.lastIndex(of: "/") else { return "." }
    return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
  }

  /// Makes a random data key, wraps it, and writes the header atomically.
  private func createHeader(at headerPath: String) throws -> RNCryptor.Keys {
    let keys = try RNCryptor.Keys.random()
    let dataKey = StoreCredential.concatenate(keys)
    let header = try credential.wrap(dataKey)
    try StoreOpener.writeHeader(header, at: headerPath, fileSystem: fileSystem, directory: path)
    return keys
  }

  /// Replaces the header file atomically; after a crash at any point the old or the new
  /// header is in place, never a mix.
  static func writeHeader(_ header: StoreHeader, at headerPath: String, fileSystem: any FileSystem, directory: String)
    throws
  {
    try AtomicFile.write(header.encoded(), to: headerPath, fileSystem: fileSystem, syncingDirectory: directory)
  }

  private func loadSegments(cipher: RecordCipher) throws -> (CaskStore.IndexState, CaskStore.WriterState) {
    var indexState = CaskStore.IndexState()
    var writerState = CaskStore.WriterState()
    let names = try fileSystem.contentsOfDirectory(path)

    // 4. Remove what a crash left half-written (never a finished file), and the hints whose
    // segment is gone (compaction removed it, or a crash).
    var removed: Set<String> = []
    if !options.readOnly {
      let segmentIDs = Set(names.compactMap { Segment.id(fromFileName: $0, extension: CaskFormat.segmentExtension) })
      for name in names {
        let orphanHint = Segment.id(fromFileName: name, extension: CaskFormat.hintExtension).map {
          !segmentIDs.contains($0)
        }
        guard name.hasSuffix(CaskFormat.temporarySuffix) || orphanHint == true else { continue }
        try fileSystem.removeFile("\(path)/\(name)")
        removed.insert(name)
      }
      // Durably gone, so their numbers can be handed out again (below).
      if !removed.isEmpty { try fileSystem.syncDirectory(path) }
    }

    // 5. Open every segment, check its header, and sort them into history order.
    var found: [FoundSegment] = []
    var maxID: UInt32 = 0
    // The file with the highest number (a segment rather than its hint), which the refusal
    // names when no number is left above it.
    var highestNumberHolder: String?
    func reserve(_ id: UInt32, for name: String) {
      let isSegment = name.lowercased().hasSuffix(CaskFormat.segmentExtension)
      let holderIsSegment = highestNumberHolder?.lowercased().hasSuffix(CaskFormat.segmentExtension) ?? false
      if id > maxID || highestNumberHolder == nil || (id == maxID && isSegment && !holderIsSegment) {
        highestNumberHolder = name
      }
      maxID = max(maxID, id)
    }
    for name in names {
      if let id = Segment.id(fromForeignName: name, extension: CaskFormat.segmentExtension) {
        // Not written by the engine (upper case): reported, and its number never reused.
        reserve(id, for: name)
        indexState.recovery.unreadableSegments.append(name)
        continue
      }
      guard let id = Segment.id(fromFileName: name, extension: CaskFormat.segmentExtension) else { continue }
      reserve(id, for: name)
      let file = try fileSystem.open("\(path)/\(name)", mode: options.readOnly ? .readOnly : .readWrite)
      let fullLength = try file.size()
      // No valid segment is longer than 32-bit offsets reach; anything beyond is not read.
      let length = min(fullLength, CaskFormat.maximumSegmentLength)
      if fullLength > length {
        indexState.recovery.corruptRegions.append(
          CorruptRegion(
            file: name, offset: length, length: fullLength - length,
            reason: "segment longer than the format allows; the excess is ignored"))
      }
      let header = try file.read(count: CaskFormat.segmentHeaderLength, at: 0)
      switch Segment.decodeHeader(header) {
      case .success(let decoded) where decoded.id == id:
        // A base is a number handed out earlier (a writer's own id, or the newest input's for
        // a compaction output): new ids go above every base too, so that a segment started
        // after this open sorts after this one even if its header claims a base beyond the ids.
        reserve(decoded.order.base, for: name)
        found.append(FoundSegment(segment: Segment(id: id, order: decoded.order, file: file), length: length))
      case .failure(.unsupportedVersion(let version, let supported)):
        throw CaskError.unsupportedVersion(found: version, supported: supported)
      default:
        indexState.recovery.unreadableSegments.append(name)
      }
    }
    // Two segments with one (base, sub), which the engine never writes, go by file id: the
    // same order at every open, not the directory listing's.
    found.sort { ($0.segment.order, $0.segment.id) < ($1.segment.order, $1.segment.id) }
    // Never reuse the number of any file that is around: a hint left behind by a crash must
    // not be taken for the hint of a new segment with the same number. (The files removed
    // above are gone for good: the directory was synced.)
    for name in names where !removed.contains(name) {
      let stem =
        name.hasSuffix(CaskFormat.temporarySuffix) ? String(name.dropLast(CaskFormat.temporarySuffix.count)) : name
      if let id = Segment.id(fromFileName: stem, extension: CaskFormat.segmentExtension)
        ?? Segment.id(fromFileName: stem, extension: CaskFormat.hintExtension)
      {
        reserve(id, for: name)
      }
    }
    // The last number is never handed out, so a file named ffffffff cannot overflow it.
    writerState.nextSegmentID = maxID == UInt32.max ? UInt32.max : maxID + 1
    writerState.highestNumberHolder = highestNumberHolder

    // 6. Index each segment in order, from its hint when the hint is valid, else by scanning.
    var maxSequence: UInt64 = 0
    var lastHints: [HintEntry] = []
    // Size the index once for every entry the hints claim (read from each hint's first blocks;
    // each whole hint is read and authenticated below, one at a time): growing it key by key
    // rehashes it again and again.
    var hinted = 0
    for item in found { hinted += claimedHintCount(for: item.segment, cipher: cipher) }
    indexState.directory.reserveCapacity(additional: hinted)
    for (position, item) in found.enumerated() {
      let isLast = position == found.count - 1
      let segment = item.segment
      indexState.segments[segment.id] = segment
      var entries: [HintEntry] = []
      var segmentEnd = item.length
      var listed: UInt64 = 0
      var keepsDamage = false
      if let hint = loadHint(for: segment, length: item.length, cipher: cipher) {
        maxSequence = max(maxSequence, hint.maxSequence)
        indexState.recovery.segmentsFromHints += 1
        // Indexed straight from the decrypted hint: no `String` for a key of up to 15 bytes.
        // In batches whose index slots are fetched together first (`KeyDirectory.warm`): a
        // large index misses the cache on almost every key, and one miss at a time made the
        // lookups most of open's time.
        try hint.forEachBatch(of: KeyDirectory.warmBatch) { batch in
          indexState.directory.warm(batch.lazy.map { $0.key })
          for entry in batch {
            let location = RecordLocation(segment: segment.id, offset: entry.offset, length: entry.length)
            listed += UInt64(entry.length)
            if entry.isDelete {
              indexState.directory.applyDelete(keyBytes: entry.key, at: location)
              if isLast {
                entries.append(
                  HintEntry(
                    isDelete: true, offset: entry.offset, length: entry.length,
                    key: String(decoding: entry.key, as: UTF8.self)))
              }
            } else {
              indexState.directory.applyPut(keyBytes: entry.key, at: location)
            }
          }
        }
      } else {
        // Only an ordinary segment (order sub 0) is appended to, so only it can end in reserved zeros.
        let scanned = try scan(
          segment, length: item.length, allowsReserved: isLast && segment.order.sub == 0, cipher: cipher,
          report: &indexState.recovery)
        entries = scanned.entries
        maxSequence = max(maxSequence, scanned.maxSequence)
        indexState.recovery.segmentsScanned += 1
        if scanned.outcome.reservedBytes > 0 {
          // 7. The zeros a writer under `.always` reserved ahead of itself: not damage, and
          // nothing was written there. Cut, so the file ends at its last record again.
          if !options.readOnly {
            try segment.file.truncate(to: scanned.outcome.validEnd)
            try segment.file.sync()
          }
          segmentEnd = scanned.outcome.validEnd
          indexState.recovery.zeroTailBytes += scanned.outcome.reservedBytes
        }
        if scanned.outcome.hasTornTail {
          if isLast && !options.readOnly {
            // 7. Cut the torn tail of the last segment so appends resume on a record boundary.
            try segment.file.truncate(to: scanned.outcome.validEnd)
            try segment.file.sync()
            segmentEnd = scanned.outcome.validEnd
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
        keepsDamage = scanned.keepsDamage
        if !(isLast && appendsTo(segment, end: segmentEnd)) && !options.readOnly
          && !scanned.keepsDamage && !scanned.outcome.hasTornTail && scanned.outcome.reservedBytes == 0
        {
          // A sealed segment (also the last one, when full) whose hint was lost or is stale:
          // write it now so the next open is fast and no stale hint is left behind.
          try? HintFile(
            segmentID: segment.id, segmentLength: item.length, maxSequence: scanned.maxSequence, entries: entries
          ).write(in: path, fileSystem: fileSystem, cipher: cipher)
        }
        for entry in entries {
          let location = RecordLocation(segment: segment.id, offset: entry.offset, length: entry.length)
          listed += UInt64(entry.length)
          if entry.isDelete {
            indexState.directory.applyDelete(IndexKey(entry.key), at: location)
          } else {
            indexState.directory.applyPut(IndexKey(entry.key), at: location)
          }
        }
      }
      // A hint leaves out records that were already overwritten when it was written.
      let recordBytes = segmentEnd - min(segmentEnd, UInt64(CaskFormat.segmentHeaderLength))
      if recordBytes > listed { indexState.directory.addDeadBytes(recordBytes - listed, in: segment.id) }
      if isLast {
        lastHints = entries.filter(\.isDelete)
        // 8. Keep appending to the last segment while it has room; its hint (now stale) goes.
        if appendsTo(segment, end: segmentEnd) {
          try fileSystem.removeFile("\(path)/\(Segment.hintName(id: segment.id))")
          writerState.active = CaskStore.ActiveSegment(
            segment: segment, end: segmentEnd, tombstones: lastHints, maxSequence: maxSequence)
          writerState.active?.keepsDamage = keepsDamage
        }
      }
    }
    // A damaged or crafted sequence field (records are only CRC-protected) may claim the
    // largest sequence; appends then fail with `corrupt` instead of overflowing.
    writerState.nextSequence = maxSequence == .max ? .max : maxSequence + 1
    return (indexState, writerState)
  }

  /// Whether the last segment is appended to after open: an ordinary segment with room left.
  private func appendsTo(_ segment: Segment, end: UInt64) -> Bool {
    !options.readOnly && segment.order.sub == 0
      && end < min(options.segmentSizeLimit, CaskFormat.maximumSegmentLength)
  }

  /// The segment's hint, if it authenticates, describes this segment and its exact length,
  /// and every entry lies inside the segment.
  /// The entry count the segment's hint claims, unauthenticated (`HintPayload.claimedCount`);
  /// 0 without a readable hint.
  private func claimedHintCount(for segment: Segment, cipher: RecordCipher) -> Int {
    let hintPath = "\(path)/\(Segment.hintName(id: segment.id))"
    guard fileSystem.fileKind(hintPath) == .file, let file = try? fileSystem.open(hintPath, mode: .readOnly) else {
      return 0
    }
    defer { file.close() }
    var head = [UInt8](repeating: 0, count: HintPayload.headLength)
    guard let size = try? file.size(),
      let received = try? head.withUnsafeMutableBytes({ try file.readFully(into: $0, at: 0) }), received == head.count
    else { return 0 }
    return head.withUnsafeBytes { HintPayload.claimedCount(head: $0, fileLength: size, cipher: cipher) } ?? 0
  }

  private func loadHint(for segment: Segment, length: UInt64, cipher: RecordCipher) -> HintPayload? {
    let hintPath = "\(path)/\(Segment.hintName(id: segment.id))"
    guard fileSystem.fileKind(hintPath) == .file,
      let file = try? fileSystem.open(hintPath, mode: .readOnly)
    else { return nil }
    defer { file.close() }
    // Read into a mapped buffer, returned to the system afterwards (see `TransientBuffer`).
    guard let size = try? file.size(), let buffer = try? TransientBuffer(count: Int(size), purpose: hintPath),
      let received = try? file.readFully(into: buffer.bytes, at: 0), received == Int(size),
      let hint = try? HintPayload(
        file: UnsafeRawBufferPointer(buffer.bytes), cipher: cipher, path: hintPath),
      hint.segmentID == segment.id, hint.segmentLength == length
    else { return nil }
    // Every entry must lie inside the segment, or the hint is not trusted.
    var inside = true
    try? hint.forEachEntry { _, offset, entryLength, _ in
      if UInt64(offset) < UInt64(CaskFormat.segmentHeaderLength) || UInt64(offset) + UInt64(entryLength) > length {
        inside = false
      }
    }
    return inside ? hint : nil
  }

  private struct Scanned {
    var entries: [HintEntry]
    var maxSequence: UInt64
    var outcome: ScanOutcome
    /// Damage that open does not cut away: a damaged region inside, a batch dropped because a
    /// key did not authenticate, records after a lost batch beginning.
    var keepsDamage: Bool
  }

  /// Reads every record of a segment, decrypting keys only.
  private func scan(
    _ segment: Segment, length: UInt64, allowsReserved: Bool, cipher: RecordCipher, report: inout RecoveryReport
  ) throws -> Scanned {
    var entries: [HintEntry] = []
    var maxSequence: UInt64 = 0
    var scanner = SegmentScanner(file: segment.file, length: length, allowsReserved: allowsReserved)
    var undecryptable: [CorruptRegion] = []
    let name = Segment.fileName(id: segment.id)
    let outcome = try scanner.scan { batch in
      var decoded: [HintEntry] = []
      for record in batch {
        // A key that does not authenticate, or that `put` could not have written, makes its
        // whole batch unusable.
        func drop(_ reason: String) {
          undecryptable.append(
            CorruptRegion(
              file: name, offset: record.offset, length: UInt64(record.header.totalLength),
              reason: "\(reason); its batch was dropped"))
          report.droppedRecords += batch.count
        }
        guard let bytes = try? cipher.open(record.keyMessage, file: name, offset: record.offset) else {
          drop("record does not authenticate")
          return
        }
        let key: String
        do {
          key = try RecordCipher.validKey(bytes, file: name, offset: record.offset)
        } catch CaskError.corrupt(_, _, let reason) {
          drop(reason)
          return
        }
        decoded.append(
          HintEntry(
            isDelete: record.header.isDelete, offset: UInt32(record.offset),
            length: UInt32(record.header.totalLength), key: key))
        maxSequence = max(maxSequence, record.header.sequence)
      }
      entries.append(contentsOf: decoded)
    }
    report.corruptRegions.append(contentsOf: outcome.corruptions + undecryptable)
    report.droppedRecords += outcome.droppedRecords
    return Scanned(
      entries: entries, maxSequence: maxSequence, outcome: outcome,
      keepsDamage: !outcome.corruptions.isEmpty || !undecryptable.isEmpty || outcome.orphanRecords > 0)
  }

}

import Foundation

extension Manifest {
  /// The manifest describing `segments` (the active one by its end, the others by their
  /// file's size) as the writer state has them.
  ///
  /// - Parameters:
  ///   - hasEpochs: whether the store has key epochs (the layout with them).
  ///   - identity: a version 5 store's identity (the layout with it).
  static func describing(
    _ segments: [Segment], active: CaskStore.ActiveSegment?, writer: CaskStore.WriterState, retired: [UInt32],
    hasEpochs: Bool, identity: [UInt8]?
  ) throws -> Manifest {
    // A reader refuses generation 2^64 - 1 (it could never be superseded): never write it.
    guard writer.manifestGeneration < UInt64.max - 1 else {
      throw CaskError.integrityViolation(file: CaskFormat.manifestFileName, reason: "no manifest generations left")
    }
    var entries: [Entry] = []
    for segment in segments.sorted(by: { ($0.order, $0.id) < ($1.order, $1.id) }) {
      let isActive = active?.segment.id == segment.id
      let length = isActive ? active?.end ?? 0 : min(try segment.file.size(), CaskFormat.maximumSegmentLength)
      entries.append(
        Entry(id: segment.id, order: segment.order, isActive: isActive, length: length, epoch: segment.epoch))
    }
    return Manifest(
      generation: writer.manifestGeneration + 1, lastSequence: writer.nextSequence - 1,
      nextSegmentID: writer.nextSegmentID, segments: entries, retired: retired,
      pending: writer.pendingOutputs.keys.sorted(), pendingEpochs: hasEpochs ? writer.pendingOutputs : [:],
      hasEpochs: hasEpochs, identity: identity)
  }

  /// How a manifest read at open describes what open found (`describesCleanClose`).
  enum CleanClose: Equatable {
    /// Not as a clean close left the store: open writes a manifest.
    case no
    /// As a clean close left it: the segment open resumes, if any, listed as active at its
    /// length.
    case clean
    /// As a clean close by an older version left it: every segment sealed, the one open
    /// resumes included.
    case cleanResumedSealed
  }

  /// Whether this manifest, read at open, is the one a clean close wrote for what open found:
  /// what `describing` gives for it with every segment at its file's size (`active`, the
  /// segment open resumes, if any, included), apart from the generation and the retired list
  /// (open has removed every retired file that was left), and apart from whether a segment
  /// whose file is exactly the listed length is listed as active or sealed: a clean close
  /// lists its last segment as active, an older version's as sealed.
  func describesCleanClose(
    of segments: [Segment], active: CaskStore.ActiveSegment?, writer: CaskStore.WriterState, hasEpochs: Bool,
    identity: [UInt8]?
  ) throws -> CleanClose {
    if let active, try active.segment.file.size() != active.end { return .no }
    var expected = try Manifest.describing(
      segments, active: nil, writer: writer, retired: retired, hasEpochs: hasEpochs, identity: identity)
    expected.generation = generation
    var found = self
    // Every length is a file's size in `expected`: an active entry of that length is one a
    // clean close listed.
    for (index, entry) in found.segments.enumerated() where entry.isActive {
      found.segments[index].isActive = false
    }
    guard expected == found else { return .no }
    guard let active else { return .clean }
    let listedActive = self.segments.contains { $0.id == active.segment.id && $0.isActive }
    return listedActive ? .clean : .cleanResumedSealed
  }

  /// Writes the manifest into the store directory `path` atomically (temporary file, sync,
  /// rename, directory sync).
  ///
  /// - Returns: the digest of what was written: its last 32 bytes, the message's HMAC.
  @discardableResult
  func write(in path: String, fileSystem: any FileSystem, cipher: RecordCipher) throws -> [UInt8] {
    let bytes = try encoded(cipher: cipher)
    try AtomicFile.write(
      bytes, to: "\(path)/\(CaskFormat.manifestFileName)", fileSystem: fileSystem, syncingDirectory: path)
    return Array(bytes.suffix(CaskFormat.valueDigestLength))
  }
}

extension CaskStore {
  /// Rewrites the manifest (version 3 stores; nothing before) for the state under the writer
  /// lock: at seal, after a compaction's outputs are in place, at close. Segments in
  /// `writer.retiredSegments` are left out of the list and named as retired.
  ///
  /// - Parameters:
  ///   - retiring: segments a compaction replaced, retired from this manifest on; if it
  ///     cannot be written they are not.
  ///   - listingActive: the segment listed as active, at its end, when there is no active
  ///     segment (close's, just sealed).
  ///
  /// - Returns: the digest of the manifest written (`Manifest.write`), `nil` when none was.
  @discardableResult
  func writeManifest(
    _ writer: inout WriterState, retiring: [UInt32] = [], listingActive: ActiveSegment? = nil
  ) throws -> [UInt8]? {
    let ring = keyRing.withLock { $0 }
    guard ring.current.bindsRecords, !options.readOnly else { return nil }
    let before = writer.retiredSegments
    writer.retiredSegments.formUnion(retiring)
    do {
      let retired = writer.retiredSegments
      let segments = state.withLock { Array($0.segments.values) }.filter { !retired.contains($0.id) }
      let manifest = try Manifest.describing(
        segments, active: writer.active ?? listingActive, writer: writer, retired: retired.sorted(),
        hasEpochs: ring.hasEpochs,
        identity: ring.identity)
      writer.untouchedSinceOpen = false
      // A checkpoint lists the segments a compaction retires: it goes first, so that no
      // checkpoint describing them outlives them (open would refuse it all the same).
      if !retiring.isEmpty { retireCheckpoint(writer: &writer) }
      let digest = try manifest.write(in: path, fileSystem: fileSystem, cipher: ring.current)
      writer.manifestGeneration = manifest.generation
      return digest
    } catch {
      writer.retiredSegments = before
      throw error
    }
  }
}

import Foundation

/// Checking the files of a version 3 store against its manifest at open (Docs/FORMAT.md,
/// "Opening a store", step 5a).
extension StoreOpener {
  /// The store's manifest, `nil` when there is none.
  ///
  /// - Parameter listed: whether the directory's listing, read under the lock, holds its name
  ///   (so that open does not look the path up again).
  /// - Throws: `CaskError.integrityViolation` when it is there but damaged or forged.
  func readManifest(ring: KeyRing, listed: Bool) throws -> Manifest? {
    let manifestPath = "\(path)/\(CaskFormat.manifestFileName)"
    guard listed else { return nil }
    let file = try fileSystem.open(manifestPath, mode: .readOnly)
    defer { file.close() }
    return try Manifest.decode(try file.readWhole(limit: CaskFormat.maximumManifestLength), ring: ring)
  }

  /// Compares the segments found with the manifest; returns the segments to index (retired
  /// ones left out, and removed when writable) and appends what disagrees to the report.
  func applyManifest(
    _ manifest: Manifest?, to found: [FoundSegment], ring: KeyRing, report: inout RecoveryReport
  ) throws -> [FoundSegment] {
    guard let manifest else {
      // A store whose creation stopped before its first manifest has no segment either.
      if !found.isEmpty {
        report.integrityViolations.append(Manifest.missingViolation)
      }
      return found
    }
    let retired = Set(manifest.retired)
    var kept: [FoundSegment] = []
    var removed = false
    for item in found {
      let id = item.segment.id
      guard retired.contains(id) else {
        kept.append(item)
        continue
      }
      // Replaced by the compaction that wrote the manifest, which stopped before removing it.
      if !options.readOnly {
        try fileSystem.removeFile("\(path)/\(Segment.hintName(id: id))")
        try fileSystem.removeFile("\(path)/\(Segment.fileName(id: id))")
        removed = true
      }
    }
    if removed { try fileSystem.syncDirectory(path) }
    let present = kept.map {
      Manifest.PresentSegment(
        id: $0.segment.id, order: $0.segment.order, length: $0.length, epoch: $0.segment.epoch, link: $0.segment.link)
    }
    report.integrityViolations += manifest.disagreements(
      with: present, unreadable: Set(report.unreadableSegments), currentEpoch: ring.current.epoch)
    if let identity = ring.identity {
      // `present` is `kept`, position for position: the segment of an entry is at its own
      // position (no dictionary by id, a generic type whose metadata a process makes at its
      // first open).
      report.integrityViolations += manifest.chainDisagreements(with: present, identity: identity) { position in
        try? SegmentLink.tail(of: kept[position].segment, length: present[position].length)
      }
    }
    return kept
  }
}

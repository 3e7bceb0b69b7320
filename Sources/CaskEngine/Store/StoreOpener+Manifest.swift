import Foundation

/// Checking the files of a version 3 store against its manifest at open (Docs/FORMAT.md,
/// "Opening a store", step 5a).
extension StoreOpener {
  /// The store's manifest, `nil` when there is none.
  ///
  /// - Throws: `CaskError.integrityViolation` when it is there but damaged or forged.
  func readManifest(cipher: RecordCipher) throws -> Manifest? {
    let manifestPath = "\(path)/\(CaskFormat.manifestFileName)"
    guard fileSystem.fileKind(manifestPath) != .missing else { return nil }
    let file = try fileSystem.open(manifestPath, mode: .readOnly)
    defer { file.close() }
    return try Manifest.decode(try file.read(count: Int(try file.size()), at: 0), cipher: cipher)
  }

  /// Compares the segments found with the manifest; returns the segments to index (retired
  /// ones left out, and removed when writable) and appends what disagrees to the report.
  func applyManifest(
    _ manifest: Manifest?, to found: [FoundSegment], report: inout RecoveryReport
  ) throws -> [FoundSegment] {
    func violation(_ file: String, _ reason: String) {
      report.integrityViolations.append(CorruptRegion(file: file, offset: 0, length: 0, reason: reason))
    }
    guard let manifest else {
      // A store whose creation stopped before its first manifest has no segment either.
      if !found.isEmpty {
        violation(CaskFormat.manifestFileName, "the manifest is missing from a store with segments")
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
    let byID = Dictionary(kept.map { ($0.segment.id, $0) }, uniquingKeysWith: { first, _ in first })
    let unreadable = Set(report.unreadableSegments)
    for entry in manifest.segments {
      let name = Segment.fileName(id: entry.id)
      guard let item = byID[entry.id] else {
        // A damaged segment header is reported as unreadable already.
        if !unreadable.contains(name) { violation(name, "a segment the manifest lists is missing") }
        continue
      }
      if item.segment.order != entry.order {
        violation(name, "the segment's order differs from the manifest's (another file under its name)")
      }
      if entry.isActive {
        if item.length < entry.length {
          violation(name, "the segment is \(item.length) bytes, shorter than the \(entry.length) the manifest recorded")
        }
      } else if item.length != entry.length {
        violation(
          name,
          "the sealed segment is \(item.length) bytes, the manifest says \(entry.length) "
            + "(cut short, grown, or an older copy)")
      }
    }
    let listed = Set(manifest.segments.map(\.id))
    let pending = Set(manifest.pending)
    for item in kept where !listed.contains(item.segment.id) {
      let id = item.segment.id
      // Started after the manifest was written, or a compaction output it named as pending.
      guard id < manifest.nextSegmentID, !pending.contains(id) else { continue }
      violation(Segment.fileName(id: id), "a segment the manifest does not list (an older or planted copy)")
    }
    return kept
  }
}

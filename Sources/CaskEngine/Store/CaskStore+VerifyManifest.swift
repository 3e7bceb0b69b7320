import Foundation

extension CaskStore {
  /// The manifest read again and compared with the segment files as they are now (version 3
  /// stores; nothing for older ones), under the writer lock so that no seal or compaction
  /// rewrites either meanwhile. Finds what changed since open: a sealed segment cut short or
  /// replaced, a segment removed, the manifest itself damaged or put back from an older copy.
  ///
  /// - Returns: what disagrees, as damage for `verify()`'s report.
  /// - Complexity: O(s) in the number of segments, one small read.
  func manifestDisagreements() throws -> [CorruptRegion] {
    return try writer.withLock { writer -> [CorruptRegion] in
      let ring = keyRing.withLock { $0 }
      guard ring.current.bindsRecords else { return [] }
      let (segments, unreadable) = state.withLock { state in
        (Array(state.segments.values), Set(state.recovery.unreadableSegments))
      }
      let manifestPath = "\(path)/\(CaskFormat.manifestFileName)"
      guard fileSystem.fileKind(manifestPath) != .missing else {
        return segments.isEmpty ? [] : [Manifest.missingViolation]
      }
      let manifest: Manifest
      do {
        let file = try fileSystem.open(manifestPath, mode: .readOnly)
        defer { file.close() }
        manifest = try Manifest.decode(try file.readWhole(limit: CaskFormat.maximumManifestLength), ring: ring)
      } catch CaskError.integrityViolation(let file, let reason) {
        return [CorruptRegion(file: file, offset: 0, length: 0, reason: reason)]
      }
      var found: [CorruptRegion] = []
      if manifest.generation < writer.manifestGeneration {
        found.append(
          CorruptRegion(
            file: CaskFormat.manifestFileName, offset: 0, length: 0,
            reason:
              "the manifest is an older one (generation \(manifest.generation)) than this store wrote "
              + "(generation \(writer.manifestGeneration))"))
      }
      let present = try segments.map { segment in
        Manifest.PresentSegment(
          id: segment.id, order: segment.order, length: min(try segment.file.size(), CaskFormat.maximumSegmentLength),
          epoch: segment.epoch, link: segment.link)
      }
      found += manifest.disagreements(with: present, unreadable: unreadable, currentEpoch: ring.current.epoch)
      if let identity = ring.identity {
        found += manifest.chainDisagreements(with: present, identity: identity) { position in
          try? SegmentLink.tail(of: segments[position], length: present[position].length)
        }
      }
      return found
    }
  }
}

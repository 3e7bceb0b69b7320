import Foundation

extension Manifest {
  /// A segment file as it is in the directory: what the manifest is compared with.
  struct PresentSegment {
    var id: UInt32
    var order: SegmentOrder
    var length: UInt64
    var epoch: UInt32
    /// A version 5 segment's authenticated link.
    var link: SegmentLink? = nil
  }

  /// The report of a store with segments but no manifest.
  static let missingViolation = CorruptRegion(
    file: CaskFormat.manifestFileName, offset: 0, length: 0,
    reason: "the manifest is missing from a store with segments")

  /// Where the segment files `present` disagree with this manifest (Docs/FORMAT.md, section
  /// 6a): a listed segment missing, of another order, key epoch, or length (shorter for the
  /// active one, any other for a sealed one), a segment the manifest should have listed, and
  /// an unlisted one that is not under the current key epoch (or a pending one under another
  /// epoch than the manifest names).
  ///
  /// - Parameters:
  ///   - unreadable: segments whose header is damaged, reported as such already.
  ///   - currentEpoch: the header's current key epoch.
  /// - Complexity: O(n) in the number of segments.
  func disagreements(
    with present: [PresentSegment], unreadable: Set<String>, currentEpoch: UInt32
  ) -> [CorruptRegion] {
    var found: [CorruptRegion] = []
    func violation(_ file: String, _ reason: String) {
      found.append(CorruptRegion(file: file, offset: 0, length: 0, reason: reason))
    }
    // Positions in `present`, the first for an id: no array of pairs is built (open runs this
    // once, and every new generic type costs its metadata at first use).
    var byID: [UInt32: Int] = [:]
    byID.reserveCapacity(present.count)
    for (position, item) in zip(present.indices, present) where byID[item.id] == nil { byID[item.id] = position }
    for entry in segments {
      guard let position = byID[entry.id] else {
        let name = Segment.fileName(id: entry.id)
        if !unreadable.contains(name) { violation(name, "a segment the manifest lists is missing") }
        continue
      }
      let item = present[position]
      var name: String { Segment.fileName(id: entry.id) }
      if item.order != entry.order {
        violation(name, "the segment's order differs from the manifest's (another file under its name)")
      }
      if item.epoch != entry.epoch {
        violation(
          name,
          "the segment names key epoch \(item.epoch), the manifest says \(entry.epoch) (another file under its name)")
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
    let listed = Set(segments.map(\.id))
    let retired = Set(retired)
    let pending = Set(pending)
    for item in present where !listed.contains(item.id) {
      // Started after the manifest was written, a compaction output it named as pending, or
      // an input it retired that is on its way out.
      if retired.contains(item.id) { continue }
      if pending.contains(item.id) {
        if item.epoch != pendingEpochs[item.id] ?? 0 {
          violation(
            Segment.fileName(id: item.id), "a pending compaction output under another key epoch than the manifest's")
        }
        continue
      }
      if item.id >= nextSegmentID {
        // Prevents: someone holding an older epoch's key (an old header and its password)
        // planting a segment of new records under it.
        if item.epoch != currentEpoch {
          violation(
            Segment.fileName(id: item.id),
            "a segment newer than the manifest under key epoch \(item.epoch), not the current \(currentEpoch)")
        }
        continue
      }
      violation(Segment.fileName(id: item.id), "a segment the manifest does not list (an older or planted copy)")
    }
    return found
  }
}

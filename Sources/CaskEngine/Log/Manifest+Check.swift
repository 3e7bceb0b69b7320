import Foundation

extension Manifest {
  /// A segment file as it is in the directory: what the manifest is compared with.
  struct PresentSegment {
    var id: UInt32
    var order: SegmentOrder
    var length: UInt64
  }

  /// The report of a store with segments but no manifest.
  static let missingViolation = CorruptRegion(
    file: CaskFormat.manifestFileName, offset: 0, length: 0,
    reason: "the manifest is missing from a store with segments")

  /// Where the segment files `present` disagree with this manifest (Docs/FORMAT.md, section
  /// 6a): a listed segment missing, of another order, or of another length (shorter for the
  /// active one, any other for a sealed one), and a segment the manifest should have listed.
  ///
  /// - Parameter unreadable: segments whose header is damaged, reported as such already.
  /// - Complexity: O(n) in the number of segments.
  func disagreements(with present: [PresentSegment], unreadable: Set<String>) -> [CorruptRegion] {
    var found: [CorruptRegion] = []
    func violation(_ file: String, _ reason: String) {
      found.append(CorruptRegion(file: file, offset: 0, length: 0, reason: reason))
    }
    let byID = Dictionary(present.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    for entry in segments {
      let name = Segment.fileName(id: entry.id)
      guard let item = byID[entry.id] else {
        if !unreadable.contains(name) { violation(name, "a segment the manifest lists is missing") }
        continue
      }
      if item.order != entry.order {
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
    let listed = Set(segments.map(\.id))
    let passing = Set(pending).union(retired)
    for item in present where !listed.contains(item.id) {
      // Started after the manifest was written, a compaction output it named as pending, or
      // an input it retired that is on its way out.
      guard item.id < nextSegmentID, !passing.contains(item.id) else { continue }
      violation(Segment.fileName(id: item.id), "a segment the manifest does not list (an older or planted copy)")
    }
    return found
  }
}

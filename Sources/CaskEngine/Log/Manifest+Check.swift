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
  /// - Complexity: O(n log n) in the number of segments.
  func disagreements(
    with present: [PresentSegment], unreadable: Set<String>, currentEpoch: UInt32
  ) -> [CorruptRegion] {
    var found: [CorruptRegion] = []
    func violation(_ file: String, _ reason: String) {
      found.append(CorruptRegion(file: file, offset: 0, length: 0, reason: reason))
    }
    // Positions in `present` by id (the first for an id), and the id lists, sorted: open runs
    // this once per process too, and sorted arrays of integers cost no new generic types
    // (whose metadata is made at first use) where dictionaries and sets of them would.
    let byID = present.indices.sorted { (present[$0].id, $0) < (present[$1].id, $1) }
    func position(of id: UInt32) -> Int? {
      let at = SortedSegmentIDs.lowerBound(of: id, in: byID.count) { present[byID[$0]].id }
      return at < byID.count && present[byID[at]].id == id ? byID[at] : nil
    }
    for entry in segments {
      guard let position = position(of: entry.id) else {
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
    let listed = SortedSegmentIDs(segments.map(\.id))
    let retired = SortedSegmentIDs(retired)
    let pending = SortedSegmentIDs(pending)
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

/// Segment ids in ascending order, looked up by binary search: what open's checks use instead
/// of a `Set<UInt32>`, one generic type fewer for a process's first open to make.
struct SortedSegmentIDs {
  private let ids: [UInt32]

  init(_ ids: [UInt32]) {
    self.ids = ids.sorted()
  }

  func contains(_ id: UInt32) -> Bool {
    let at = Self.lowerBound(of: id, in: ids.count) { ids[$0] }
    return at < ids.count && ids[at] == id
  }

  /// The first position in `0..<count` whose id (`idAt`, ascending) is not below `id`.
  static func lowerBound(of id: UInt32, in count: Int, idAt: (Int) -> UInt32) -> Int {
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if idAt(middle) < id { low = middle + 1 } else { high = middle }
    }
    return low
  }
}

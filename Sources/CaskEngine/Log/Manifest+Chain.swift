import Foundation

extension Manifest {
  /// Version 5 (Docs/FORMAT.md, section 6b): where the segments started after this manifest was
  /// written break the chain of links (`SegmentLink`) that leads to them from the newest
  /// ordinary segment the manifest lists. Those segments are the ordinary ones (order sub 0)
  /// the manifest neither lists, retires nor names as pending, numbered at or above its
  /// `nextSegmentID`; in order, each must carry this store's identity and link to the one
  /// before it, as that one now is (length and last bytes), and the first to the newest
  /// ordinary segment the manifest lists, or to one the manifest no longer lists and nothing
  /// it lists follows (compaction removed it), or to none when the manifest lists no ordinary
  /// segment; and a compaction output must be listed or named as pending. So a segment
  /// removed from among them, two of them exchanged, one of another store or copy, one grown
  /// or cut after its successor was started, or a compaction output put back beside an older
  /// manifest is reported. Only the newest ones can go unnoticed, as a crash takes them.
  ///
  /// - Parameters:
  ///   - present: the segments in the directory, with their links (unreadable ones left out).
  ///   - identity: the store's identity, from its authenticated header.
  ///   - tail: the last bytes of the present segment at a position of `present`, at its
  ///     present length; `nil` if unreadable.
  /// - Complexity: O(n log n) in the number of segments; one small read per segment started
  ///   after the manifest.
  func chainDisagreements(
    with present: [PresentSegment], identity: [UInt8], tail: (Int) -> [UInt8]?
  ) -> [CorruptRegion] {
    var found: [CorruptRegion] = []
    func violation(_ id: UInt32, _ reason: String) {
      found.append(CorruptRegion(file: Segment.fileName(id: id), offset: 0, length: 0, reason: reason))
    }
    let listed = Set(segments.map(\.id))
    let skipped = Set(retired).union(pending)
    // Positions in `present`, not copies or a dictionary by id: those were generic types of
    // their own, whose metadata a process makes at its first open.
    let newer = present.indices.filter {
      let item = present[$0]
      return item.order.sub == 0 && !listed.contains(item.id) && !skipped.contains(item.id) && item.id >= nextSegmentID
    }.sorted { (present[$0].order, present[$0].id) < (present[$1].order, present[$1].id) }
    let listedOrdinary = segments.filter { $0.order.sub == 0 }
    let newestListed = listedOrdinary.max { $0.order < $1.order }
    // A compaction names its outputs as pending in a manifest before it puts any in place:
    // one no manifest names is planted (an output put back beside an older manifest brings
    // back the records it copied, deleted since).
    for item in present where item.order.sub != 0 && !listed.contains(item.id) && !skipped.contains(item.id) {
      violation(item.id, "a compaction output the manifest neither lists nor names as pending")
    }
    var beforePosition: Int?
    for position in newer {
      let item = present[position]
      defer { beforePosition = position }
      guard let link = item.link, link.identity == identity else {
        violation(item.id, "a segment newer than the manifest written by another store or copy")
        continue
      }
      if let beforePosition {
        let before = present[beforePosition]
        guard let previous = link.previous, previous.id == before.id, previous.order == before.order else {
          violation(
            item.id,
            "the segment does not follow \(Segment.fileName(id: before.id)) (a segment between them was removed, "
              + "or their order was changed)")
          continue
        }
        if previous.length != before.length || tail(beforePosition) != previous.tail {
          violation(
            before.id, "the segment is not as it was when the next one was started (cut short, grown or replaced)")
        }
        continue
      }
      // The first segment started after the manifest.
      guard let previous = link.previous else {
        if newestListed != nil {
          violation(item.id, "the first segment newer than the manifest names no segment before it")
        }
        continue
      }
      if previous.id >= nextSegmentID {
        violation(
          item.id,
          "the segment follows \(Segment.fileName(id: previous.id)), which is missing (a segment was removed)")
      } else if listed.contains(previous.id) {
        guard let newestListed, newestListed.id == previous.id, newestListed.order == previous.order,
          let current = present.firstIndex(where: { $0.id == previous.id })
        else {
          violation(item.id, "the segment does not follow the newest segment the manifest lists")
          continue
        }
        if previous.length != present[current].length || tail(current) != previous.tail {
          violation(
            previous.id, "the segment is not as it was when the next one was started (cut short, grown or replaced)")
        }
      } else if let newestListed, newestListed.order >= previous.order {
        violation(item.id, "the segment follows one older than the newest segment the manifest lists")
      }
    }
    return found
  }
}

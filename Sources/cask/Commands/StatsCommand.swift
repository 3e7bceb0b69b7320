import CaskCLIKit
import CipherCask

/// `cask stats STORE [--json]`.
enum StatsCommand: Subcommand {
  static var spec: CommandSpec { .stats }

  /// The figures, as `--json` prints them.
  struct Report: Encodable {
    struct Recovery: Encodable {
      var clean: Bool
      var segmentsFromHints: Int
      var segmentsScanned: Int
      var truncatedBytes: UInt64
      var zeroTailBytes: UInt64
      var droppedRecords: Int
      var corruptRegions: [VerifyCommand.Region]
      var unreadableSegments: [String]
    }

    /// The collections in byte order; in JSON an object of names and counts, where names that
    /// differ only in Unicode normalization (two collections to the store) share one entry,
    /// their counts added.
    struct Collections: Encodable {
      var counts: [CaskStore.GroupCount]

      func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(Dictionary(counts.map { ($0.group, $0.count) }, uniquingKeysWith: +))
      }
    }

    var store: String
    var keys: Int
    var collections: Collections
    var liveBytes: UInt64
    var deadBytes: UInt64
    var segments: Int
    /// The current key epoch, and the live records (and bytes) still under an older one.
    var keyEpoch: UInt32
    var olderKeyRecords: Int
    var olderKeyBytes: UInt64
    var recovery: Recovery
  }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let report = try StoreAccess.withStore(path, arguments, mode: .readOnly) { store in
      Self.report(store, path: path)
    }
    if arguments.flag("json") {
      try JSONOutput.write(report)
    } else {
      StandardStream.output.write(text(report))
    }
  }

  static func report(_ store: CaskStore, path: String) -> Report {
    let stats = store.stats()
    let recovery = stats.recovery
    let epochs = store.keyEpochs
    return Report(
      store: path, keys: stats.keys,
      collections: Report.Collections(
        // Index entries and catalogues (groups beginning with U+0001) are no collections.
        counts: store.groups().filter { $0.group.utf8.first != 1 }),
      liveBytes: stats.liveBytes,
      deadBytes: stats.deadBytes, segments: stats.segments, keyEpoch: epochs.currentEpoch,
      olderKeyRecords: epochs.olderRecords, olderKeyBytes: epochs.olderBytes,
      recovery: Report.Recovery(
        clean: recovery.isClean, segmentsFromHints: recovery.segmentsFromHints,
        segmentsScanned: recovery.segmentsScanned, truncatedBytes: recovery.truncatedBytes,
        zeroTailBytes: recovery.zeroTailBytes, droppedRecords: recovery.droppedRecords,
        corruptRegions: recovery.corruptRegions.map(VerifyCommand.Region.init),
        unreadableSegments: recovery.unreadableSegments))
  }

  static func text(_ report: Report) -> String {
    let collections = report.collections.counts
    let inCollections = collections.reduce(0) { $0 + $1.count }
    var text = "Store:        \(report.store)\n"
    text += "Keys:         \(report.keys)\n"
    text += "Collections:  \(collections.isEmpty ? "none" : "\(collections.count)")\n"
    for collection in collections {
      text += "  \(KeyText.display(collection.group)): \(counted(collection.count, "object"))\n"
    }
    if !collections.isEmpty && inCollections < report.keys {
      text += "  (outside collections: \(report.keys - inCollections) keys)\n"
    }
    text += "Live bytes:   \(report.liveBytes) (\(ByteCount.format(report.liveBytes)))\n"
    text += "Dead bytes:   \(report.deadBytes) (\(ByteCount.format(report.deadBytes)))\n"
    text += "Segments:     \(report.segments)\n"
    if report.keyEpoch > 0 {
      text +=
        "Key epoch:    "
        + keyEpochText(epoch: report.keyEpoch, olderRecords: report.olderKeyRecords, olderBytes: report.olderKeyBytes)
        + "\n"
    }
    let recovery = report.recovery
    text +=
      "Last open:    \(counted(recovery.segmentsFromHints, "segment")) from hints, \(recovery.segmentsScanned) scanned; "
      + (recovery.clean ? noDamageSeen(recovery) : "damage found (this read-only open changed nothing)") + "\n"
    if recovery.zeroTailBytes > 0 {
      text += "  zero tail (space reserved by .always, or unsynced writes): \(recovery.zeroTailBytes) bytes\n"
    }
    if !recovery.clean {
      // Cut by the next command that writes.
      if recovery.truncatedBytes > 0 { text += "  torn tail (left unread): \(recovery.truncatedBytes) bytes\n" }
      if recovery.droppedRecords > 0 {
        text += "  records of unfinished batches (left unread): \(recovery.droppedRecords)\n"
      }
      for region in recovery.corruptRegions {
        text += "  damaged: \(region.file) at offset \(region.offset), \(region.length) bytes: \(region.reason)\n"
      }
      for name in recovery.unreadableSegments { text += "  unreadable segment: \(name)\n" }
    }
    return text
  }

  /// What a clean open can say. Prevents: "clean" for a store whose records open never read
  /// (a hint stands for them) and `verify` finds damaged.
  /// The key epoch and, when there are any, the live records still under an older key:
  /// `1; 3 records (612 B) still under an older key (…)`.
  static func keyEpochText(epoch: UInt32, olderRecords: Int, olderBytes: UInt64) -> String {
    guard olderRecords > 0 else { return "\(epoch)" }
    return "\(epoch); \(counted(olderRecords, "record")) (\(ByteCount.format(olderBytes))) still under "
      + "an older key ('cask compact' seals them again under the current one)"
  }

  private static func noDamageSeen(_ recovery: Report.Recovery) -> String {
    recovery.segmentsFromHints > 0
      ? "no damage seen (records of segments read from hints are checked only by 'cask verify')"
      : "no damage seen"
  }
}

import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Every crash state of checkpoint writing (Docs/RELIABILITY.md, "Crash states"): at a seal,
/// after the interval's worth of log, at close, and its removal by a compaction. Whatever a
/// crash leaves (no checkpoint, its temporary file, the old one or the new one), the store
/// opens with every acknowledged write and nothing else.
@Suite("Crash states: checkpoint writing")
struct CrashStateCheckpointTests {
  /// Small segments and a checkpoint at every seal, every 1 KiB of log and at close
  /// (not spaced out by the store's size).
  static var options: CaskStore.Options {
    var options = CrashStateWorkload.defaultOptions
    options.segmentSizeLimit = 2048
    options.checkpoints = CaskStore.Checkpoints(interval: 1024, minimumKeys: 1, spacing: 0)
    return options
  }

  static func value(_ name: String) -> String { CrashStateTests.value(name, length: 500) }

  @Test("checkpoints at a seal, after the interval and at close", arguments: [CaskStore.Durability.always, .never])
  func writing(durability: CaskStore.Durability) throws {
    var options = Self.options
    options.durability = durability
    var workload = CrashStateWorkload(
      "checkpoint writing (\(durability))", options: options, steps: Self.steps(durable: durability == .always))
    CrashStateTests.prepared(&workload)
    workload.check = { store, _ in try Self.sortedViewProblems(store) }
    try CrashStateTests.expectNoViolation(workload)
  }

  /// Puts, a delete and a batch, in and out of a sorted group (whose keys the checkpoint also
  /// holds in sorted pages): with 500-byte values, enough log for a checkpoint after the
  /// interval, one at the seal of the first segment and one at close.
  static func steps(durable: Bool) -> [CrashStateWorkload.Step] {
    [
      .put("k0", value("k0"), durable: durable), .put(sorted("s0"), value("s0"), durable: durable),
      .put("k1", value("k1"), durable: durable), .delete("a", durable: durable),
      .batch([("k2", value("k2")), ("b", nil), (sorted("s1"), value("s1")), (sorted("s0"), nil)], durable: durable),
      .close,
    ]
  }

  /// A key of the sorted group `01 idx`.
  static func sorted(_ name: String) -> String { "\u{1}idx\u{0}\(name)" }

  /// Where a sorted group's view (read from the checkpoint's sorted pages, when open used one)
  /// differs from the group's keys the store serves.
  static func sortedViewProblems(_ store: CaskStore) throws -> [String] {
    var problems: [String] = []
    for group in store.groups() where group.group.utf8.first == CaskFormat.reservedGroupByte {
      guard let view = try store.sortedView(ofGroup: group.group) else { continue }
      let expected = try store.keys(inGroup: group.group).map { Array($0.utf8.dropFirst(group.group.utf8.count + 1)) }
        .sorted { $0.lexicographicallyPrecedes($1) }
      var walked: [[UInt8]] = []
      try view.walk(from: nil, to: nil) { key in
        walked.append(Array(key))
        return true
      }
      if walked != expected || view.count != expected.count {
        problems.append("the sorted view of a group holds \(walked.count) keys, the store \(expected.count)")
      }
    }
    return problems
  }

  @Test("a store opened from its checkpoint, written to, compacted and closed")
  func compactionRetires() throws {
    var workload = CrashStateWorkload(
      "checkpoint retired by compaction", options: Self.options,
      steps: [.delete("c"), .compact, .put("after", "1"), .close])
    workload.initialModel = [
      "a": Data(Self.value("a2").utf8), "b": Data(Self.value("b").utf8), "c": Data("c".utf8),
    ]
    workload.prepare = { root, options in
      try CrashStateWorkload.makeStore(root, options) { store in
        for round in 0..<3 { try store.put(Data(Self.value("a\(round)").utf8), forKey: "a") }
        try store.put(Data(Self.value("b").utf8), forKey: "b")
        try store.put(Data("c".utf8), forKey: "c")
      }
    }
    try CrashStateTests.expectNoViolation(workload)
  }

  @Test("a checkpoint put in place before its log is synced, and trusted, is caught")
  func plantedUnsyncedCheckpoint() throws {
    // With the switch off the checkpoint is also written at once on the writer's thread,
    // before the commit's own sync: on the queue, the bug would show only in runs where the
    // checkpoint won that race.
    var options = Self.options
    options.syncsBeforeCheckpoint = false
    options.checksCheckpoint = false
    var workload = CrashStateWorkload(
      "checkpoint before its log is synced (planted bug)", options: options, steps: Self.steps(durable: true))
    CrashStateTests.prepared(&workload)
    let reports = try CrashStateRunner(bounds: .standard).run(workload, models: [.posixMinimum])
    for report in reports {
      print("[crash-states] planted bug caught, e.g. \(report.violations.prefix(2))")
      #expect(report.violationCount > 0, "the enumerator missed a checkpoint ahead of its log")
    }
  }
}

import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Every crash state of the first writes after a clean reopen (Docs/RELIABILITY.md, "Crash
/// states"): the close leaves the last segment listed as active beside its hint, and the first
/// write appends to it without a manifest, the hint's removal queued. Whatever a crash keeps
/// of the appends and of that removal, the store opens with every acknowledged write: a hint
/// that does not state the segment's length is never used.
@Suite("Crash states: the first writes after a reopen")
struct CrashStateResumedSegmentTests {
  /// Writes, a close, writes after the reopen (the first a put, then a batch and a delete),
  /// another close and one more reopen.
  static func steps(durable: Bool) -> [CrashStateWorkload.Step] {
    [
      .put("d", "d1", durable: durable), .close, .put("e", "e1", durable: durable),
      .batch([("a", nil), ("f", "f1")], durable: durable), .close, .delete("b", durable: durable),
    ]
  }

  @Test("writes after a clean reopen", arguments: [CaskStore.Durability.always, .never])
  func firstWritesAfterReopen(durability: CaskStore.Durability) throws {
    var options = CrashStateWorkload.defaultOptions
    options.durability = durability
    var workload = CrashStateWorkload(
      "first writes after a reopen (\(durability))", options: options, steps: Self.steps(durable: durability == .always)
    )
    CrashStateTests.prepared(&workload)
    try CrashStateTests.expectNoViolation(workload)
  }

  @Test("a first write into a segment that fills up seals it and starts the next")
  func firstWriteSealsSegment() throws {
    var options = CrashStateWorkload.defaultOptions
    options.segmentSizeLimit = 2048
    var workload = CrashStateWorkload(
      "first write after a reopen seals the segment", options: options,
      steps: [.put("k", CrashStateTests.value("k", length: 1800)), .put("l", "l1")])
    CrashStateTests.prepared(&workload)
    try CrashStateTests.expectNoViolation(workload)
  }

  @Test("a hint trusted while it states a shorter length than its segment's is caught")
  func plantedStaleHintTrusted() throws {
    var options = CrashStateWorkload.defaultOptions
    options.checksHintLength = false
    var workload = CrashStateWorkload(
      "stale hint trusted (planted bug)", options: options, steps: Self.steps(durable: true))
    CrashStateTests.prepared(&workload)
    let reports = try CrashStateRunner(bounds: .standard).run(workload, models: [.posixMinimum])
    for report in reports {
      print("[crash-states] planted bug caught: \(report.violationCount), e.g. \(report.violations.prefix(2))")
      #expect(report.violationCount > 0, "the enumerator missed a stale hint that open trusted")
    }
  }
}

import CaskEngine
import Foundation

/// A small, valid store: one sealed segment of three batches and the hint that describes it.
package enum FuzzSeedStore {
  /// The segment, its hint entries, and its highest sequence number.
  package static func sealedSegment() throws -> (
    bytes: [UInt8], entries: [FuzzingEntry.HintRecord], maxSequence: UInt64
  ) {
    let start = CaskFormat.recordFlagBatchStart
    let end = CaskFormat.recordFlagBatchEnd
    var builder = SegmentBuilder()
    var entries: [FuzzingEntry.HintRecord] = []
    let steps: [(String, String?, UInt8)] = [
      ("user:1", "alice", start | end), ("user:2", "bob", start), ("user:3", "carol", 0), ("user:1", nil, end),
      ("user:10", String(repeating: "x", count: 200), start | end),
    ]
    for (index, (key, value, flags)) in steps.enumerated() {
      let (offset, length) = try builder.append(key: key, value: value, flags: flags, sequence: UInt64(index + 1))
      entries.append(FuzzingEntry.HintRecord(isDelete: value == nil, offset: offset, length: length, key: key))
    }
    return (builder.bytes, entries, UInt64(steps.count))
  }

  /// Segment sizes below which the seed segment counts as full, so open treats it as sealed.
  package static let sealedLimit: UInt64 = 64
}

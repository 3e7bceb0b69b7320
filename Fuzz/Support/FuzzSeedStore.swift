import CaskEngine
import Foundation
import RNCryptorCodec

/// A small, valid store: one sealed segment of four batches (keys in no group and in two) and
/// the hint that describes it.
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
      ("posts\u{0}1", "first", start), ("posts\u{0}2", "second", 0), ("tags\u{0}swift", "", end),
    ]
    for (index, (key, value, flags)) in steps.enumerated() {
      let (offset, length) = try builder.append(key: key, value: value, flags: flags, sequence: UInt64(index + 1))
      entries.append(FuzzingEntry.HintRecord(isDelete: value == nil, offset: offset, length: length, key: key))
    }
    return (builder.bytes, entries, UInt64(steps.count))
  }

  /// The keys the segment holds, sorted by UTF-8 bytes (as `CaskStore.keys()` lists them).
  package static let liveKeys = ["posts\u{0}1", "posts\u{0}2", "tags\u{0}swift", "user:10", "user:2", "user:3"]

  /// The `MANIFEST` of the store whose only segment is the sealed segment of `length` bytes
  /// (number 1, sealed) under key epoch `epoch`: the layout with epochs when `hasEpochs`.
  package static func manifestPayload(
    length: Int, epoch: UInt32 = 0, hasEpochs: Bool = false, dataKeys: RNCryptor.Keys = FuzzStore.dataKeys
  ) throws -> Data {
    try FuzzingEntry.manifestPayload(
      generation: 1, lastSequence: 8, nextSegmentID: 2,
      segments: [.init(id: 1, base: 1, sub: 0, isActive: false, length: UInt64(length), epoch: epoch)],
      hasEpochs: hasEpochs, dataKeys: dataKeys)
  }

  /// Segment sizes below which the seed segment counts as full, so open treats it as sealed.
  package static let sealedLimit: UInt64 = 64
}

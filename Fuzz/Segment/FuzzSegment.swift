import CaskEngine
import Foundation
import FuzzSupport

/// fuzz-segment: a store whose only segment is the fuzz input, opened through the public API
/// (header check, record scan, batch rules, torn-tail cut, reserved zeros, index), then every
/// key read and the store verified.
///
/// Input: one mode byte, then the segment file. Mode bit 0 repairs every CRC the bytes have
/// room for (so mutations reach the batch and key logic behind the checksums), bit 1 opens
/// read-only, bit 2 makes the segment count as full (sealed: a hint is written at open).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSegment(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  SegmentTarget.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

enum SegmentTarget {
  /// The store directory with its header file, laid out once per process.
  static let template = FuzzStore.disk(with: [(CaskFormat.headerFileName, FuzzStore.headerFile)])

  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    var segment = [UInt8](input.rest())
    if mode & 1 != 0 { FuzzingEntry.repairSegmentChecksums(&segment) }
    let fileSystem = FuzzStore.disk(with: [("00000001.seg", Data(segment))], on: template)
    let limit: UInt64 = mode & 4 != 0 ? 64 : 1 << 20
    FuzzStore.openAndReadAll(fileSystem, readOnly: mode & 2 != 0, segmentSizeLimit: limit)
  }

  /// Segments made by the real record encoder: one batch, many, deletes, a torn tail, a batch
  /// that lost its commit marker.
  static func seeds() throws -> [(String, Data)] {
    let start = CaskFormat.recordFlagBatchStart
    let end = CaskFormat.recordFlagBatchEnd
    let header = SegmentBuilder().bytes

    var single = SegmentBuilder()
    try single.append(key: "user:1", value: "alice", flags: start | end, sequence: 1)

    var batches = SegmentBuilder()
    try batches.append(key: "user:1", value: "alice", flags: start | end, sequence: 1)
    try batches.append(key: "user:2", value: "bob", flags: start, sequence: 2)
    try batches.append(key: "user:3", value: String(repeating: "c", count: 300), flags: 0, sequence: 3)
    try batches.append(key: "user:1", value: nil, flags: end, sequence: 4)
    try batches.append(key: "\u{0}group\u{0}id", value: "", flags: start | end, sequence: 5)

    var unfinished = SegmentBuilder()
    try unfinished.append(key: "a", value: "1", flags: start, sequence: 1)
    try unfinished.append(key: "b", value: "2", flags: start | end, sequence: 2)
    try unfinished.append(key: "c", value: "3", flags: start, sequence: 3)

    var torn = batches
    torn.cut(17)

    // What a crash under `.always` leaves: the last record, then zeros the writer reserved
    // (Docs/FORMAT.md, "Reserved space"); and a record that reached them only in part.
    let reserved = single.bytes + [UInt8](repeating: 0, count: 2048)
    var next = single
    try next.append(key: "user:2", value: "bob", flags: start | end, sequence: 2)
    let partial =
      single.bytes + next.bytes[single.bytes.count..<single.bytes.count + 40]
      + [UInt8](repeating: 0, count: 2048)

    var sealed = SegmentBuilder(sub: 2)
    try sealed.append(key: "compacted", value: "yes", flags: start | end, sequence: 9)

    return [
      ("empty", Data([0] + header)), ("single", Data([0] + single.bytes)), ("batches", Data([0] + batches.bytes)),
      ("batches-readonly", Data([2] + batches.bytes)), ("batches-full", Data([4] + batches.bytes)),
      ("unfinished", Data([0] + unfinished.bytes)), ("torn", Data([0] + torn.bytes)),
      ("torn-repaired", Data([1] + torn.bytes)), ("compaction-output", Data([0] + sealed.bytes)),
      ("reserved-zeros", Data([0] + reserved)), ("reserved-zeros-readonly", Data([2] + reserved)),
      ("torn-in-reserved-zeros", Data([0] + partial)),
    ]
  }
}

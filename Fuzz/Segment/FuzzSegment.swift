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
/// Bit 3: the rest is not a file but a list of records that the target encodes and seals
/// with the store's data key (`RecordScript`), so that fuzzed keys and values reach the checks
/// behind the HMAC: empty keys, keys at the length limit, invalid UTF-8, values bound to
/// another key, puts without a value, repeated keys and sequence numbers in a batch; bit 4
/// then makes the segment a compaction output (order sub 1). Bit 5 opens the store with key
/// epochs (header version 4, current epoch 1 with a key ring holding epoch 0), whose scripted
/// segments name epoch 1. Beside the segment lies a manifest that lists no segment (next
/// number 1), so that segment 1 counts as started after it, as the first segment of a store
/// does before its first seal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSegment(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  SegmentTarget.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

enum SegmentTarget {
  /// The store directory with its header file and manifest, laid out once per process.
  static let template = FuzzStore.disk(with: [
    (CaskFormat.headerFileName, FuzzStore.headerFile),
    (CaskFormat.manifestFileName, FuzzStore.emptyManifest(hasEpochs: false)),
  ])
  /// The same with key epochs.
  static let epochTemplate = FuzzStore.disk(with: [
    (CaskFormat.headerFileName, FuzzStore.epochHeaderFile),
    (CaskFormat.manifestFileName, FuzzStore.emptyManifest(hasEpochs: true)),
  ])

  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    let epochs = mode & 32 != 0
    var segment =
      mode & 8 != 0
      ? RecordScript.segment(from: &input, sub: mode & 16 != 0 ? 1 : 0, epoch: epochs ? 1 : 0)
      : [UInt8](input.rest())
    if mode & 1 != 0 { FuzzingEntry.repairSegmentChecksums(&segment) }
    let fileSystem = FuzzStore.disk(with: [("00000001.seg", Data(segment))], on: epochs ? epochTemplate : template)
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

    // Under key epochs (mode bit 5): the current epoch's segment, and one naming epoch 0, which
    // a segment newer than the manifest may not.
    var epochBatches = SegmentBuilder(epoch: 1)
    try epochBatches.append(key: "user:1", value: "alice", flags: start | end, sequence: 1)
    try epochBatches.append(key: "user:2", value: "bob", flags: start, sequence: 2)
    try epochBatches.append(key: "posts\u{0}1", value: "first", flags: end, sequence: 3)
    var olderEpoch = SegmentBuilder(epoch: 0)
    try olderEpoch.append(key: "user:1", value: "alice", flags: start | end, sequence: 1)

    var sealed = SegmentBuilder(sub: 2)
    try sealed.append(key: "compacted", value: "yes", flags: start | end, sequence: 9)

    // Scripts (mode bit 3): a batch of two puts and a delete; an empty key; a repeated key in
    // a full segment; a value bound to another key; a put without a value.
    let both = CaskFormat.recordFlagBatchStart | CaskFormat.recordFlagBatchEnd
    let script: [UInt8] =
      [start << 1, 1, 3, 0, 2, 0] + Array("abc".utf8) + Array("v1".utf8) + [0, 1, 3, 0, 1, 0] + Array("def".utf8)
      + [Array("w".utf8)[0]] + [1 | end << 1, 1, 3, 0, 0, 0] + Array("abc".utf8)
    let emptyKey: [UInt8] = [both << 1, 1, 0, 0, 1, 0, 0x78]
    let repeatedKey: [UInt8] = [both << 1, 1, 2, 200, 1, 0, 0x6B, 0x78, 0x79]
    let otherKey: [UInt8] = [both << 1, 1, 1, 0, 1, 1, 0x6B, 0x78]
    let noValue: [UInt8] = [both << 1, 1, 1, 0, 0, 2, 0x6B]
    return [
      ("script-batch", Data([8] + script)), ("script-empty-key", Data([8] + emptyKey)),
      ("script-repeated-key-full", Data([12] + repeatedKey)), ("script-other-key", Data([8] + otherKey)),
      ("script-no-value", Data([8] + noValue)),
      ("empty", Data([0] + header)), ("single", Data([0] + single.bytes)), ("batches", Data([0] + batches.bytes)),
      ("batches-readonly", Data([2] + batches.bytes)), ("batches-full", Data([4] + batches.bytes)),
      ("unfinished", Data([0] + unfinished.bytes)), ("torn", Data([0] + torn.bytes)),
      ("torn-repaired", Data([1] + torn.bytes)), ("compaction-output", Data([0] + sealed.bytes)),
      ("reserved-zeros", Data([0] + reserved)), ("reserved-zeros-readonly", Data([2] + reserved)),
      ("torn-in-reserved-zeros", Data([0] + partial)),
      ("epochs-batches", Data([32] + epochBatches.bytes)), ("epochs-batches-full", Data([36] + epochBatches.bytes)),
      ("epochs-batches-readonly", Data([34] + epochBatches.bytes)),
      ("epochs-older-epoch", Data([32] + olderEpoch.bytes)), ("epochs-script-batch", Data([40] + script)),
    ]
  }
}

/// Records described by the fuzz input, encoded and sealed here with the fuzzing store's data
/// key. Each record: a flags byte (bit 0 a delete, bits 1-2 the batch flags: start, commit
/// marker), a sequence step, the key's length `L`, a repeat count `R`, the value's length, a
/// value mode; then the key's `L` bytes, taken `R + 1` times (at most 4 KiB), and the value's.
/// Value mode bit 0 binds the value to another key, bit 1 leaves a put without its value
/// message, bit 2 writes a wrong key length into the value's binding, bit 3 seals the key
/// message for another offset. (Keys around the
/// 65,535-byte limit are `CraftedRecordTests`' part: here they made every input ten times
/// slower, their bytes checksummed and sealed several times under coverage instrumentation.)
enum RecordScript {
  static func segment(from input: inout FuzzInput, sub: UInt32, epoch: UInt32) -> [UInt8] {
    var bytes = FuzzingEntry.segmentHeader(id: 1, base: 1, sub: sub, epoch: epoch)
    var sequence: UInt64 = 0
    var serial = 0
    while input.remaining >= 6 {
      let flags = input.byte()
      sequence &+= UInt64(input.byte())
      let length = input.byte()
      let repeats = Int(input.byte()) + 1
      let valueLength = Int(input.byte())
      let valueMode = input.byte()
      let part = input.take(Int(length))
      var key = Data()
      for _ in 0..<repeats where key.count + part.count <= 4096 { key += part }
      let value = input.take(valueLength)
      serial += 1
      let delete = flags & 1 != 0
      var valueMessage: Data?
      if !delete && valueMode & 2 == 0 {
        let bound = valueMode & 1 != 0 ? key + Data("~".utf8) : key
        let claimed = bound.count + (valueMode & 4 != 0 ? 1 : 0)
        var plaintext = Data([
          CaskFormat.messageTagValue, UInt8(truncatingIfNeeded: claimed), UInt8(truncatingIfNeeded: claimed >> 8),
        ])
        plaintext += bound + value
        valueMessage = FuzzStore.seal(plaintext, iv: 5000 + serial)
      }
      // Sealed for its place (format version 3); value mode bit 3 seals it for the next
      // offset instead, as a moved record would be.
      let offset = UInt64(bytes.count) + (valueMode & 8 != 0 ? 1 : 0)
      let keyPlaintext = FuzzingEntry.keyPlaintext(
        key, delete: delete, flags: (flags >> 1) & 3, segmentID: 1, offset: offset, sequence: sequence,
        valueMessage: valueMessage)
      FuzzingEntry.appendRecord(
        to: &bytes, delete: delete, flags: (flags >> 1) & 3, sequence: sequence,
        keyMessage: FuzzStore.seal(keyPlaintext, iv: serial), valueMessage: valueMessage)
    }
    return bytes
  }
}

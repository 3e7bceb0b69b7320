import CaskEngine
import Foundation
import FuzzSupport
import RNCryptorCodec

/// fuzz-hint: a store with one valid sealed segment and a fuzzed hint file beside it, opened
/// through the public API, every key read, the store verified.
///
/// Input: one mode byte, then the hint. Mode bit 0 takes the rest as the hint's plaintext
/// payload and seals it under the store's data key (so mutations reach the entry parser and the
/// checks of entries against the segment, behind the HMAC); otherwise the rest is the whole
/// file. Bit 1 opens read-only. Bit 2 seals the payload as a grouped hint ("CCHINTS2", whose
/// payload has a group section) rather than an earlier one.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHint(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  HintTarget.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

enum HintTarget {
  static let segment: [UInt8] = {
    do {
      return try FuzzSeedStore.sealedSegment().bytes
    } catch {
      fatalError("seed segment: \(error)")
    }
  }()

  /// The store directory with its header file and the segment, laid out once per process.
  static let template = FuzzStore.disk(with: [
    (CaskFormat.headerFileName, FuzzStore.headerFile), ("00000001.seg", Data(segment)),
  ])

  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    var hint = input.rest()
    if mode & 1 != 0 {
      let magic = mode & 4 != 0 ? CaskFormat.hintMagicGrouped : CaskFormat.hintMagic
      hint = Data(magic) + FuzzStore.seal(hint, iv: 7)
    }
    let fileSystem = FuzzStore.disk(with: [("00000001.hint", hint)], on: template)
    FuzzStore.openAndReadAll(fileSystem, readOnly: mode & 2 != 0, segmentSizeLimit: FuzzSeedStore.sealedLimit)
  }

  /// The true hint (as a payload and as a sealed file), and hints that lie: wrong length,
  /// entries past the end, an entry pointing at another record, a key the segment lacks.
  static func seeds() throws -> [(String, Data)] {
    let (bytes, entries, maxSequence) = try FuzzSeedStore.sealedSegment()
    func payload(
      _ entries: [FuzzingEntry.HintRecord], length: UInt64 = UInt64(bytes.count), grouped: Bool = false
    ) throws -> Data {
      try FuzzingEntry.hintPayload(
        segmentID: 1, segmentLength: length, maxSequence: maxSequence, entries: entries,
        dataKeys: FuzzStore.dataKeys, grouped: grouped)
    }
    let truth = try payload(entries)
    let grouped = try payload(entries, grouped: true)
    // A group section that lies: every count (ungrouped puts, each group's) at its largest.
    var inflated = grouped
    let section = 1 + 28
    for offset in section..<section + 4 { inflated[offset] = 0xFF }
    let groupsListed = Int(inflated[section + 4]) | Int(inflated[section + 5]) << 8
    var position = section + 6
    for _ in 0..<groupsListed {
      for offset in position..<position + 4 { inflated[offset] = 0xFF }
      position += 6 + (Int(inflated[position + 4]) | Int(inflated[position + 5]) << 8)
    }
    var swapped = entries
    swapped[0].offset = entries[1].offset
    swapped[0].length = entries[1].length
    var beyond = entries
    beyond[4].length += 1
    var stranger = entries
    stranger[2].key = "user:99"
    return [
      ("payload", Data([1]) + truth), ("payload-readonly", Data([3]) + truth),
      ("file", Data([0]) + Data(CaskFormat.hintMagic) + FuzzStore.seal(truth, iv: 7)),
      ("wrong-length", Data([1]) + (try payload(entries, length: UInt64(bytes.count) + 1))),
      ("swapped-entry", Data([1]) + (try payload(swapped))), ("entry-past-end", Data([1]) + (try payload(beyond))),
      ("unknown-key", Data([1]) + (try payload(stranger))), ("empty", Data([1]) + (try payload([]))),
      ("grouped-payload", Data([5]) + grouped), ("grouped-payload-readonly", Data([7]) + grouped),
      ("grouped-file", Data([0]) + Data(CaskFormat.hintMagicGrouped) + FuzzStore.seal(grouped, iv: 7)),
      ("grouped-inflated-counts", Data([5]) + inflated),
      ("grouped-empty", Data([5]) + (try payload([], grouped: true))),
    ]
  }
}

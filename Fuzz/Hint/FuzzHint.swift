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
/// payload has a group section) rather than an earlier one. Bit 3 fuzzes the manifest instead:
/// the rest (the plaintext payload when bit 0 is set, else the whole file) becomes the
/// store's `MANIFEST`, sealed under the data key, and the true grouped hint lies beside the
/// segment. Otherwise the manifest is the true one (segment 1, sealed, its length). Bit 4
/// (without bit 3) fuzzes the hint of the first segment of a format version 5 store whose
/// records attach index keys (`AttachedHintStore`): bit 0 seals the payload behind "CCHINTS3"
/// (groups named by number in a table of names) when bit 2 is set, else behind "CCHINTS2"
/// (sections spelled out).
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
  /// The true manifest and the true grouped hint, sealed once per process.
  static let manifest = FuzzStore.manifestFile(sealing { try FuzzSeedStore.manifestPayload(length: segment.count) })
  static let groupedHint =
    Data(CaskFormat.hintMagicGrouped) + FuzzStore.seal(sealing { try payload(grouped: true) }, iv: 7)

  private static func sealing(_ make: () throws -> Data) -> Data {
    do {
      return try make()
    } catch {
      fatalError("the fuzzing store's files: \(error)")
    }
  }

  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    var file = input.rest()
    if mode & 8 != 0 {
      if mode & 1 != 0 { file = FuzzStore.manifestFile(file) }
      let fileSystem = FuzzStore.disk(
        with: [("00000001.hint", groupedHint), (CaskFormat.manifestFileName, file)], on: template)
      FuzzStore.openAndReadAll(fileSystem, readOnly: mode & 2 != 0, segmentSizeLimit: FuzzSeedStore.sealedLimit)
      return
    }
    if mode & 16 != 0 {
      if mode & 1 != 0 {
        let magic = mode & 4 != 0 ? CaskFormat.hintMagicNamed : CaskFormat.hintMagicGrouped
        file = Data(magic) + FuzzStore.seal(file, keys: AttachedHintStore.template.dataKeys, iv: 7)
      }
      AttachedHintStore.test(hint: file, readOnly: mode & 2 != 0)
      return
    }
    if mode & 1 != 0 {
      let magic = mode & 4 != 0 ? CaskFormat.hintMagicGrouped : CaskFormat.hintMagic
      file = Data(magic) + FuzzStore.seal(file, iv: 7)
    }
    let fileSystem = FuzzStore.disk(
      with: [("00000001.hint", file), (CaskFormat.manifestFileName, manifest)], on: template)
    FuzzStore.openAndReadAll(fileSystem, readOnly: mode & 2 != 0, segmentSizeLimit: FuzzSeedStore.sealedLimit)
  }

  /// The true hint (as a payload and as a sealed file), and hints that lie: wrong length,
  /// entries past the end, an entry pointing at another record, a key the segment lacks; the
  /// true manifest, and manifests that list nothing, the segment as active, or retire it.
  static func seeds() throws -> [(String, Data)] {
    let (bytes, entries, _) = try FuzzSeedStore.sealedSegment()
    let truth = try payload()
    let grouped = try payload(grouped: true)
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
    func manifest(_ segments: [FuzzingEntry.ManifestSegment], retired: [UInt32] = [], next: UInt32 = 2) throws -> Data {
      try FuzzingEntry.manifestPayload(
        generation: 3, lastSequence: 8, nextSegmentID: next, segments: segments, retired: retired, hasEpochs: false,
        dataKeys: FuzzStore.dataKeys)
    }
    let length = UInt64(bytes.count)
    let trueManifest = try FuzzSeedStore.manifestPayload(length: bytes.count)
    let attached = try AttachedHintStore.seeds()
    let earlier: [(String, Data)] = [
      ("manifest-payload", Data([9]) + trueManifest), ("manifest-payload-readonly", Data([11]) + trueManifest),
      ("manifest-file", Data([8]) + FuzzStore.manifestFile(trueManifest)),
      ("manifest-empty", Data([9]) + (try manifest([], next: 1))),
      (
        "manifest-active",
        Data([9]) + (try manifest([.init(id: 1, base: 1, sub: 0, isActive: true, length: length - 9)]))
      ),
      ("manifest-retired", Data([9]) + (try manifest([], retired: [1]))),
      (
        "manifest-two-segments",
        Data([9])
          + (try manifest(
            [
              .init(id: 1, base: 1, sub: 0, isActive: false, length: length),
              .init(id: 2, base: 2, sub: 0, isActive: true, length: 32),
            ], next: 3))
      ),
      ("payload", Data([1]) + truth), ("payload-readonly", Data([3]) + truth),
      ("file", Data([0]) + Data(CaskFormat.hintMagic) + FuzzStore.seal(truth, iv: 7)),
      ("wrong-length", Data([1]) + (try payload(length: UInt64(bytes.count) + 1))),
      ("swapped-entry", Data([1]) + (try payload(swapped))), ("entry-past-end", Data([1]) + (try payload(beyond))),
      ("unknown-key", Data([1]) + (try payload(stranger))), ("empty", Data([1]) + (try payload([]))),
      ("grouped-payload", Data([5]) + grouped), ("grouped-payload-readonly", Data([7]) + grouped),
      ("grouped-file", Data([0]) + Data(CaskFormat.hintMagicGrouped) + FuzzStore.seal(grouped, iv: 7)),
      ("grouped-inflated-counts", Data([5]) + inflated),
      ("grouped-empty", Data([5]) + (try payload([], grouped: true))),
    ]
    return earlier + attached
  }

  /// The payload of the segment's true hint, or of one with other `entries` or `length`.
  static func payload(
    _ entries: [FuzzingEntry.HintRecord]? = nil, length: UInt64? = nil, grouped: Bool = false
  ) throws -> Data {
    let (bytes, trueEntries, maxSequence) = try FuzzSeedStore.sealedSegment()
    return try FuzzingEntry.hintPayload(
      segmentID: 1, segmentLength: length ?? UInt64(bytes.count), maxSequence: maxSequence,
      entries: entries ?? trueEntries, dataKeys: FuzzStore.dataKeys, grouped: grouped)
  }
}

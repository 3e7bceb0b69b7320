import CaskEngine
import Foundation
import FuzzSupport
import RNCryptorCodec

/// fuzz-checkpoint: the `CHECKPOINT` reader (Docs/FORMAT.md, section 18) on a fuzzed file:
/// root, pages and every table's checks, as open runs them before matching the checkpoint
/// against the store's segments.
///
/// Input: one mode byte, then the file. With mode bit 0 the rest is a list of plaintexts,
/// each a 4-byte little-endian length and its bytes, the root's first: each page is sealed
/// under the data key, the root's page references (its last 36 bytes per page) are set to the
/// sealed pages' lengths and digests, and the root is sealed, so that mutations reach the
/// parsers and checks behind the HMACs. Otherwise the rest is the whole file.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCheckpoint(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  CheckpointTarget.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

enum CheckpointTarget {
  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    var file = input.rest()
    if mode & 1 != 0 { file = CheckpointFile.assemble(file) }
    _ = FuzzingEntry.readCheckpoint(file, dataKeys: FuzzStore.dataKeys)
  }

  /// The true checkpoint (structured and whole), and ones that lie: a table claiming one key
  /// more, slots pointing past their segment, a long key's position past its chunk, no pages.
  static func seeds() throws -> [(String, Data)] {
    // The root's page references normalised: the engine sealed the pages with random IVs.
    let truth = CheckpointFile.normalized(try FuzzingEntry.checkpointPlaintexts(dataKeys: FuzzStore.dataKeys))
    let root = truth[0]
    // The first table's key count: after the fixed part and one segment entry.
    let countOffset = CaskFormat.checkpointRootFixedLength + CaskFormat.checkpointSegmentLength + 8
    var moreKeys = root
    moreKeys[countOffset] &+= 1
    moreKeys[72] &+= 1
    var outside = truth
    outside[1] = FuzzingEntry.changingSlots(truth[1]) { slots in
      for slot in stride(from: 0, to: slots.count, by: CaskFormat.checkpointSlotLength) where slots[slot + 28] != 0 {
        slots[slot + 20] = 0xFF
        slots[slot + 23] = 0x7F
      }
    }
    var longKeys = truth
    longKeys[1] = FuzzingEntry.changingSlots(truth[1]) { slots in
      for slot in stride(from: 0, to: slots.count, by: CaskFormat.checkpointSlotLength)
      where slots[slot + 28] & 31 == 31 {
        slots[slot + 4] = 0x40
      }
    }
    return [
      ("structured", Data([1]) + CheckpointFile.list(truth)),
      ("file", Data([0]) + CheckpointFile.assemble(CheckpointFile.list(truth))),
      ("more-keys-than-slots", Data([1]) + CheckpointFile.list([moreKeys] + truth.dropFirst())),
      ("slots-outside-segment", Data([1]) + CheckpointFile.list(outside)),
      ("long-key-outside-chunk", Data([1]) + CheckpointFile.list(longKeys)),
      ("root-only", Data([1]) + CheckpointFile.list([root])), ("empty", Data([0])),
    ]
  }
}

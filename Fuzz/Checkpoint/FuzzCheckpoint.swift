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
    if mode & 1 != 0 { file = assemble(file) }
    _ = FuzzingEntry.readCheckpoint(file, dataKeys: FuzzStore.dataKeys)
  }

  /// A checkpoint file from length-prefixed plaintexts (the root's first).
  static func assemble(_ list: Data) -> Data {
    var plaintexts: [Data] = []
    var position = list.startIndex
    while position + 4 <= list.endIndex {
      let length = list[position..<position + 4].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
      position += 4
      let end = min(list.endIndex, position + length)
      plaintexts.append(Data(list[position..<end]))
      position = end
    }
    guard var root = plaintexts.first else { return Data() }
    let pages = plaintexts.dropFirst().enumerated().map { FuzzStore.seal($1, iv: $0 + 1) }
    let references = CaskFormat.checkpointPageRefLength * pages.count
    if root.count >= references {
      var at = root.endIndex - references
      for page in pages {
        withUnsafeBytes(of: UInt32(page.count).littleEndian) { root.replaceSubrange(at..<at + 4, with: $0) }
        root.replaceSubrange(at + 4..<at + 36, with: page.suffix(32))
        at += 36
      }
    }
    let sealedRoot = FuzzStore.seal(root, iv: 0)
    var file = Data(CaskFormat.checkpointMagic)
    withUnsafeBytes(of: UInt32(sealedRoot.count).littleEndian) { file.append(contentsOf: $0) }
    file.append(sealedRoot)
    for page in pages { file.append(page) }
    return file
  }

  /// The length-prefixed list of `plaintexts`.
  static func list(_ plaintexts: [Data]) -> Data {
    var list = Data()
    for plaintext in plaintexts {
      withUnsafeBytes(of: UInt32(plaintext.count).littleEndian) { list.append(contentsOf: $0) }
      list.append(plaintext)
    }
    return list
  }

  /// The true checkpoint (structured and whole), and ones that lie: a table claiming one key
  /// more, slots pointing past their segment, a long key's position past its chunk, no pages.
  static func seeds() throws -> [(String, Data)] {
    let truth = try FuzzingEntry.checkpointPlaintexts(dataKeys: FuzzStore.dataKeys)
    let root = truth[0]
    // The first table's key count: after the fixed part and one segment entry.
    let countOffset = CaskFormat.checkpointRootFixedLength + CaskFormat.checkpointSegmentLength + 8
    var moreKeys = root
    moreKeys[countOffset] &+= 1
    moreKeys[72] &+= 1
    var outside = truth
    for slot in stride(from: 16, to: outside[1].count, by: 32) {
      outside[1][slot + 20] = 0xFF
      outside[1][slot + 23] = 0x7F
    }
    var longKeys = truth
    for slot in stride(from: 16, to: longKeys[1].count, by: 32) where longKeys[1][slot + 28] & 31 == 31 {
      longKeys[1][slot + 4] = 0x40
    }
    return [
      ("structured", Data([1]) + list(truth)), ("file", Data([0]) + assemble(list(truth))),
      ("more-keys-than-slots", Data([1]) + list([moreKeys] + truth.dropFirst())),
      ("slots-outside-segment", Data([1]) + list(outside)), ("long-key-outside-chunk", Data([1]) + list(longKeys)),
      ("root-only", Data([1]) + list([root])), ("empty", Data([0])),
    ]
  }
}

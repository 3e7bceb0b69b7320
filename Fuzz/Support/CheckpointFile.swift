import CaskEngine
import Foundation
import RNCryptorCodec

/// A `CHECKPOINT` file made from its plaintexts, for the targets that fuzz checkpoints behind
/// their MACs (`fuzz-checkpoint`, `fuzz-store`): each page sealed with a fixed IV, the root's
/// page references (its last 4 bytes per page) set to the sealed pages' lengths,
/// and the root sealed behind the file's head (Docs/FORMAT.md, section 18).
package enum CheckpointFile {
  /// A checkpoint file from a length-prefixed list of plaintexts (`list`), the root's first,
  /// sealed under `keys`.
  package static func assemble(_ list: Data, keys: RNCryptor.Keys = FuzzStore.dataKeys) -> Data {
    var plaintexts: [Data] = []
    var position = list.startIndex
    while position + 4 <= list.endIndex {
      let length = list[position..<position + 4].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
      position += 4
      let end = min(list.endIndex, position + length)
      plaintexts.append(Data(list[position..<end]))
      position = end
    }
    guard let root = plaintexts.first else { return Data() }
    let pages = plaintexts.dropFirst().enumerated().map { FuzzStore.seal($1, keys: keys, iv: $0 + 1) }
    let sealedRoot = FuzzStore.seal(withReferences(root, to: Array(pages)), keys: keys, iv: 0)
    var file = Data(CaskFormat.checkpointMagic)
    withUnsafeBytes(of: UInt32(sealedRoot.count).littleEndian) { file.append(contentsOf: $0) }
    file.append(sealedRoot)
    for page in pages { file.append(page) }
    return file
  }

  /// `root` with its last page references naming `pages` (each its length); unchanged when it
  /// is too short to hold them.
  package static func withReferences(_ root: Data, to pages: [Data]) -> Data {
    var root = root
    let references = CaskFormat.checkpointPageRefLength * pages.count
    guard root.count >= references else { return root }
    var at = root.endIndex - references
    for page in pages {
      withUnsafeBytes(of: UInt32(page.count).littleEndian) { root.replaceSubrange(at..<at + 4, with: $0) }
      at += CaskFormat.checkpointPageRefLength
    }
    return root
  }

  /// The length-prefixed list of `plaintexts`.
  package static func list(_ plaintexts: [Data]) -> Data {
    var list = Data()
    for plaintext in plaintexts {
      withUnsafeBytes(of: UInt32(plaintext.count).littleEndian) { list.append(contentsOf: $0) }
      list.append(plaintext)
    }
    return list
  }

  /// The plaintexts as `assemble` would seal them: the root's page references set to the
  /// pages sealed with fixed IVs under `keys`, so that a seed made of them is the same bytes
  /// whatever IVs the engine drew when it wrote the checkpoint.
  package static func normalized(_ plaintexts: [Data], keys: RNCryptor.Keys = FuzzStore.dataKeys) -> [Data] {
    guard let root = plaintexts.first else { return plaintexts }
    let pages = plaintexts.dropFirst().enumerated().map { FuzzStore.seal($1, keys: keys, iv: $0 + 1) }
    return [withReferences(root, to: Array(pages))] + plaintexts.dropFirst()
  }
}

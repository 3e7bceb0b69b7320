import CaskEngine
import CaskTestSupport
import Foundation
import FuzzSupport
import RNCryptorCodec

/// fuzz-store: a whole store of the current format version (version 5: a header authenticated
/// by its MAC and naming the store's identity, segments linked one to the next, short
/// tombstones, hints, a manifest and a checkpoint), every file of it the fuzz input, opened
/// through the public API; then every key read, the store verified, a write, a close (which
/// writes a checkpoint), and a reopen that must list the same keys and the write.
///
/// Input: one mode byte, then the files, each a name byte, a 4-byte little-endian length and
/// its bytes. The name byte's low 5 bits choose the name (`StoreFiles.names`); with bit 7 the
/// bytes are a plaintext that the target seals under the store's data key (unwrapped from the
/// input's `CASK` with the fuzzing keys): a manifest's or hint's payload behind its 8-byte
/// magic, or a checkpoint's root and pages as `fuzz-checkpoint` lists them (each page sealed,
/// the root's page references set to them). Mode bit 0 re-authenticates what the data key
/// covers after the mutation: the header's MAC and CRC, each segment's header CRC, link MAC
/// and record CRCs, so that changed fields (version, flags, identity, a link's predecessor)
/// reach the checks behind the MACs. Bit 1 opens read-only (nothing written, no reopen).
/// `CASK_FUZZ_PLANT=checkpoint-trusted-blindly` plants a bug on purpose (`plantedBug`).
///
/// The seeds are stores the engine itself wrote (`StoreFiles.seeds`), so they hold a random
/// data key, identity and IVs: `scripts/make-fuzz-corpus.sh` keeps the committed ones and
/// writes new ones only when asked.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWholeStore(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  StoreFiles.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

enum StoreFiles {
  /// The names a name byte's low 5 bits choose: every file a small store of up to 14
  /// segments has, and one segment more (a planted file).
  static let names: [String] =
    [CaskFormat.headerFileName, CaskFormat.manifestFileName, CaskFormat.checkpointFileName]
    + (1...14).flatMap { [segmentName($0), hintName($0)] } + [segmentName(15)]

  static func segmentName(_ id: Int) -> String { String(format: "%08x.", id) + CaskFormat.segmentExtension }
  static func hintName(_ id: Int) -> String { String(format: "%08x.", id) + CaskFormat.hintExtension }

  /// Whether the process runs with the bug planted on purpose (open trusting any authentic
  /// checkpoint): `CASK_FUZZ_PLANT=checkpoint-trusted-blindly`, for showing that the target
  /// catches it (`FuzzPlantedBugTests`, Docs/RELIABILITY.md). Never set otherwise.
  static let plantedBug = ProcessInfo.processInfo.environment["CASK_FUZZ_PLANT"] == "checkpoint-trusted-blindly"

  /// An empty store directory, laid out once per process.
  static let template = FuzzStore.disk(with: [])

  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    var files: [String: (bytes: [UInt8], sealed: Bool)] = [:]
    while input.remaining >= 5 {
      let tag = input.byte()
      let length = (0..<4).reduce(0) { $0 | Int(input.byte()) << (8 * $1) }
      // A later file of the same name replaces an earlier one.
      files[names[Int(tag & 31) % names.count]] = ([UInt8](input.take(length)), tag & 128 != 0)
    }
    let dataKeys = files[CaskFormat.headerFileName].flatMap {
      FuzzingEntry.dataKeys(ofHeader: $0.bytes, userKeys: FuzzStore.userKeys)
    }
    var laidOut: [(String, Data)] = []
    for (name, file) in files.sorted(by: { $0.key < $1.key }) {
      var bytes = file.bytes
      if let dataKeys {
        if file.sealed { bytes = seal(bytes, name: name, dataKeys: dataKeys) }
        if mode & 1 != 0 {
          if name == CaskFormat.headerFileName {
            FuzzingEntry.reauthenticateHeader(&bytes, dataKeys: dataKeys)
          } else if name.hasSuffix(CaskFormat.segmentExtension) {
            FuzzingEntry.reauthenticateSegment(&bytes, keys: dataKeys)
          }
        }
      }
      laidOut.append((name, Data(bytes)))
    }
    let fileSystem = FuzzStore.disk(with: laidOut, on: template)
    let authentic = mode & 1 == 0 && !files.values.contains { $0.sealed }
    FuzzStore.openReadAllAndReopen(fileSystem, readOnly: mode & 2 != 0, authentic: authentic, plantedBug: plantedBug)
  }

  /// `plaintext` sealed under `dataKeys` as the file `name` holds it.
  static func seal(_ plaintext: [UInt8], name: String, dataKeys: RNCryptor.Keys) -> [UInt8] {
    if name == CaskFormat.checkpointFileName {
      return [UInt8](CheckpointFile.assemble(Data(plaintext), keys: dataKeys))
    }
    let magic = min(8, plaintext.count)
    return Array(plaintext[0..<magic]) + [UInt8](FuzzStore.seal(Data(plaintext[magic...]), keys: dataKeys, iv: 40))
  }
}

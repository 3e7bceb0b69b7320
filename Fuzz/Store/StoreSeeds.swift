import CaskEngine
import CaskTestSupport
import Foundation
import FuzzSupport
import RNCryptorCodec

/// The seeds of `fuzz-store`: stores the current engine wrote on an in-memory disk under the
/// fuzzing keys, in the states open meets: closed with a checkpoint that covers the whole
/// log, a log that goes on past its checkpoint, no checkpoint, left open without a close
/// (no hint for the active segment), left open after a checkpoint covering part of the active
/// segment (and that segment then cut before it), after a compaction; each also with the
/// manifest, hints and checkpoint as plaintexts (sealed by the target) and re-authenticated.
extension StoreFiles {
  static func seeds() throws -> [(String, Data)] {
    let fileSystem = FaultyFileSystem(directories: ["/fuzz"])
    var options = CaskStore.Options(durability: .always, segmentSizeLimit: 2000, autoCompaction: nil)
    options.fileSystem = fileSystem
    options.checkpoints = CaskStore.Checkpoints(interval: 1 << 40, minimumKeys: 1)
    var store = try CaskStore(path: FuzzStore.path, keys: FuzzStore.userKeys, options: options)
    try write(store, round: 0)
    try store.close()
    let closed = try files(fileSystem)

    // The checkpoint stays; more log after it (open replays it from where the checkpoint ends).
    var later = options
    later.checkpoints = nil
    store = try CaskStore(path: FuzzStore.path, keys: FuzzStore.userKeys, options: later)
    try write(store, round: 1)
    try store.close()
    let beyond = try files(fileSystem)

    // Left open: the active segment has no hint, the checkpoint is the one before.
    store = try CaskStore(path: FuzzStore.path, keys: FuzzStore.userKeys, options: later)
    try write(store, round: 2)
    let unclosed = try files(fileSystem)
    try store.close()

    store = try CaskStore(path: FuzzStore.path, keys: FuzzStore.userKeys, options: options)
    _ = try store.compact()
    try store.close()
    let compacted = try files(fileSystem)

    // Left open after a checkpoint taken in the background (every 200 bytes of log), which
    // covers the active segment up to a record: open loads it and scans only what follows.
    var often = options
    often.checkpoints = CaskStore.Checkpoints(interval: 200, minimumKeys: 1, spacing: 0)
    store = try CaskStore(path: FuzzStore.path, keys: FuzzStore.userKeys, options: often)
    try write(store, round: 3)
    let midLog = try filesOnceCheckpointed(fileSystem, after: compacted)
    try store.close()

    var seeds: [(String, Data)] = []
    let states = [
      ("closed", closed), ("log-after-checkpoint", beyond), ("unclosed", unclosed),
      ("checkpoint-in-active-segment", midLog),
    ]
    for (name, state) in states + [("compacted", compacted)] {
      seeds.append((name, Data([0]) + input(state, sealed: false)))
      seeds.append(("\(name)-payloads", Data([1]) + input(state, sealed: true)))
    }
    seeds.append(("checkpoint-ahead-of-log", Data([0]) + input(cutNewestSegment(midLog), sealed: false)))
    seeds.append(("closed-readonly", Data([2]) + input(closed, sealed: false)))
    seeds.append(
      (
        "closed-no-checkpoint",
        Data([0]) + input(closed.filter { $0.0 != CaskFormat.checkpointFileName }, sealed: false)
      ))
    return seeds
  }

  /// Puts in no group, in a group and in a reserved group, overwrites, and deletes (short
  /// tombstones), over several segments.
  private static func write(_ store: CaskStore, round: Int) throws {
    for index in 0..<6 {
      let key = index % 3 == 0 ? "users\u{0}\(index)" : index % 3 == 1 ? "key-\(index)" : "\u{1}idx\u{0}\(index)"
      try store.put(
        Data("value \(round) \(index) ".utf8) + Data(repeating: UInt8(index), count: 20 * index), forKey: key)
    }
    _ = try store.delete(round == 0 ? "key-1" : "users\u{0}\(3 * round)")
    try store.put(Data("overwritten \(round)".utf8), forKey: "key-4")
    _ = try store.delete("never-written-\(round)")
  }

  /// `files` with the newest segment cut after its link, before its first record: the
  /// checkpoint, which covers some of that segment, is then ahead of the log (open must not
  /// trust it).
  private static func cutNewestSegment(_ files: [(String, [UInt8])]) -> [(String, [UInt8])] {
    let newest = files.map(\.0).filter { $0.hasSuffix(CaskFormat.segmentExtension) }.max()
    return files.map { name, bytes in
      (
        name,
        name == newest ? Array(bytes.prefix(CaskFormat.segmentHeaderLength + CaskFormat.segmentLinkLength)) : bytes
      )
    }
  }

  /// The store's files once its `CHECKPOINT` is no longer the one in `before` (the background
  /// checkpoint written), waiting up to five seconds.
  private static func filesOnceCheckpointed(_ fileSystem: FaultyFileSystem, after before: [(String, [UInt8])])
    throws -> [(String, [UInt8])]
  {
    let old = before.first { $0.0 == CaskFormat.checkpointFileName }?.1
    let path = "\(FuzzStore.path)/\(CaskFormat.checkpointFileName)"
    for _ in 0..<500 where fileSystem.contents(of: path) == old {
      usleep(10_000)
    }
    return try files(fileSystem)
  }

  /// The store's files (not its lock), by name.
  private static func files(_ fileSystem: FaultyFileSystem) throws -> [(String, [UInt8])] {
    try fileSystem.contentsOfDirectory(FuzzStore.path).filter { $0 != CaskFormat.lockFileName }.map { name in
      guard names.contains(name), let bytes = fileSystem.contents(of: "\(FuzzStore.path)/\(name)") else {
        throw CaskError.corrupt(file: name, offset: 0, reason: "a file fuzz-store's names do not reach")
      }
      return (name, bytes)
    }
  }

  /// The target's input for `files`: with `sealed`, the manifest, hints and checkpoint as the
  /// plaintexts the target seals.
  private static func input(_ files: [(String, [UInt8])], sealed: Bool) -> Data {
    let header = files.first { $0.0 == CaskFormat.headerFileName }?.1 ?? []
    let dataKeys = FuzzingEntry.dataKeys(ofHeader: header, userKeys: FuzzStore.userKeys)
    var input = Data()
    for (name, bytes) in files {
      var tag = UInt8(names.firstIndex(of: name) ?? 0)
      var contents = bytes
      if sealed, let dataKeys, let plaintext = plaintext(of: bytes, name: name, dataKeys: dataKeys) {
        tag |= 128
        contents = plaintext
      }
      input.append(tag)
      withUnsafeBytes(of: UInt32(contents.count).littleEndian) { input.append(contentsOf: $0) }
      input.append(contentsOf: contents)
    }
    return input
  }

  /// What the target seals back into `bytes`: a checkpoint's root and pages, or a manifest's
  /// or hint's magic and payload; `nil` for other files.
  private static func plaintext(of bytes: [UInt8], name: String, dataKeys: RNCryptor.Keys) -> [UInt8]? {
    if name == CaskFormat.checkpointFileName {
      return FuzzingEntry.checkpointPlaintexts(ofFile: bytes, dataKeys: dataKeys).map {
        [UInt8](CheckpointFile.list(CheckpointFile.normalized($0, keys: dataKeys)))
      }
    }
    guard name == CaskFormat.manifestFileName || name.hasSuffix(CaskFormat.hintExtension), bytes.count > 8,
      let payload = try? RNCryptor.decrypt(Data(bytes[8...]), keys: dataKeys)
    else { return nil }
    return Array(bytes[0..<8]) + [UInt8](payload)
  }
}

import CaskEngine
import CaskTestSupport
import Foundation
import FuzzSupport
import RNCryptorCodec

/// The store of `fuzz-hint`'s mode bit 4: a format version 5 store whose object records
/// attach index keys (Docs/FORMAT.md, "Version 5: attached keys"), written by the engine once
/// per process on an in-memory disk, so that a fuzzed hint of its first segment reaches the
/// attachment sections and the table of group names of a "CCHINTS3" hint. The engine draws the
/// data key, the identity and every IV at random; the hint's payload holds none of them
/// (offsets, lengths, sequence numbers, keys and sections only), so the seeds made of it are
/// the same bytes at every run.
enum AttachedHintStore {
  /// The first segment's hint, which the input replaces.
  static let hintName = "00000001.hint"

  /// The store's files but the first segment's hint, laid out once; its data key; and the
  /// engine's own hint of the first segment.
  static let template: (disk: FaultyFileSystem, dataKeys: RNCryptor.Keys, hint: [UInt8]) = {
    do {
      return try write()
    } catch {
      fatalError("fuzz-hint's store with attached keys: \(error)")
    }
  }()

  /// Where segment 1 counts as full, so that the writes fill several segments.
  static let segmentSizeLimit: UInt64 = 1500

  /// The keys a put of object `id` with `texts` attaches: one per text, in the group `idx`
  /// or, for a text starting with `x`, `idy` (both reserved for indexes, as the collections'
  /// are).
  static func attached(id: String, texts: String) -> [String] {
    texts.split(separator: ",").map { text in
      (text.hasPrefix("x") ? "\u{1}idy" : "\u{1}idx") + "\u{0}\(text)\u{0}\(id)"
    }
  }

  private static func write() throws -> (disk: FaultyFileSystem, dataKeys: RNCryptor.Keys, hint: [UInt8]) {
    let fileSystem = FaultyFileSystem(directories: ["/fuzz"])
    var options = CaskStore.Options(durability: .never, segmentSizeLimit: segmentSizeLimit, autoCompaction: nil)
    options.fileSystem = fileSystem
    options.checkpoints = nil
    let store = try CaskStore(path: FuzzStore.path, keys: FuzzStore.userKeys, options: options)
    store.extensions.setCommitHook { writes in
      var additions = CommitAdditions()
      for write in writes where write.key.hasPrefix("obj\u{0}") {
        guard let value = write.value else { continue }
        additions.attachments[write.key] = attached(
          id: String(write.key.dropFirst(4)), texts: String(decoding: value, as: UTF8.self))
      }
      return additions
    }
    // Objects with texts in both groups, a plain key, overwrites that keep, change and drop
    // texts, and deletes: segment 1 holds puts with sections, a put without, and tombstones.
    let writes: [(String, String?)] = [
      ("obj\u{0}1", "paris,xa"), ("obj\u{0}2", "rome,xb,xc"), ("plain", "no texts"), ("obj\u{0}3", "paris"),
      ("obj\u{0}1", "paris,xd"), ("obj\u{0}2", nil), ("obj\u{0}4", "oslo,xa"), ("obj\u{0}3", "rome,xe"),
      ("obj\u{0}5", "lima"), ("obj\u{0}4", nil), ("obj\u{0}6", "paris,xf,xg"), ("obj\u{0}7", "kyiv"),
    ]
    for (key, value) in writes {
      if let value { try store.put(Data(value.utf8), forKey: key) } else { _ = try store.delete(key) }
    }
    try store.close()
    let directory = FuzzStore.path
    guard let header = fileSystem.contents(of: "\(directory)/\(CaskFormat.headerFileName)"),
      let dataKeys = FuzzingEntry.dataKeys(ofHeader: header, userKeys: FuzzStore.userKeys),
      let hint = fileSystem.contents(of: "\(directory)/\(hintName)"),
      fileSystem.fileKind("\(directory)/00000002.seg") != .missing
    else { throw CaskError.corrupt(file: hintName, offset: 0, reason: "the store did not seal its first segment") }
    try fileSystem.removeFile("\(directory)/\(hintName)")
    return (fileSystem, dataKeys, hint)
  }

  /// Opens the store with `file` as its first segment's hint, reads everything, writes.
  static func test(hint file: Data, readOnly: Bool) {
    let fileSystem = FuzzStore.disk(with: [(hintName, file)], on: template.disk)
    FuzzStore.openAndReadAll(fileSystem, readOnly: readOnly, segmentSizeLimit: segmentSizeLimit)
  }

  /// The true hint's payload with its groups named by number (sealed behind "CCHINTS3") and
  /// spelled out (behind "CCHINTS2"), and a "CCHINTS3" payload whose sections name the other
  /// group: an authentic hint that lies about which index each text is in.
  static func seeds() throws -> [(String, Data)] {
    let named = try FuzzingEntry.attachedHintPayload(
      ofFile: template.hint, dataKeys: template.dataKeys, namingGroups: true)
    let whole = try FuzzingEntry.attachedHintPayload(
      ofFile: template.hint, dataKeys: template.dataKeys, namingGroups: false)
    guard let swapped = swappingGroupNames(named) else {
      throw CaskError.corrupt(file: hintName, offset: 0, reason: "the hint does not name two groups")
    }
    return [
      ("attached-named-payload", Data([21]) + named), ("attached-named-payload-readonly", Data([23]) + named),
      ("attached-whole-payload", Data([17]) + whole), ("attached-named-swapped-groups", Data([21]) + swapped),
    ]
  }

  /// `payload` (a "CCHINTS3" one) with the two names of its table of group names exchanged;
  /// `nil` unless the table holds two names of one length.
  private static func swappingGroupNames(_ payload: Data) -> Data? {
    let bytes = [UInt8](payload)
    // tag(1) + the fixed header (28) + ungrouped puts (4), then the groups listed.
    var at = 1 + 28 + 4
    guard bytes.count > at + 2 else { return nil }
    let listed = Int(bytes[at]) | Int(bytes[at + 1]) << 8
    at += 2
    for _ in 0..<listed {
      guard bytes.count > at + 6 else { return nil }
      at += 6 + (Int(bytes[at + 4]) | Int(bytes[at + 5]) << 8)
    }
    guard bytes.count > at + 6, bytes[at] == 2, bytes[at + 1] == 0 else { return nil }
    let length = Int(bytes[at + 2]) | Int(bytes[at + 3]) << 8
    let second = at + 4 + length
    guard bytes.count > second + 2 + length,
      Int(bytes[second]) | Int(bytes[second + 1]) << 8 == length
    else { return nil }
    var swapped = bytes
    swapped.replaceSubrange(at + 4..<second, with: bytes[second + 2..<second + 2 + length])
    swapped.replaceSubrange(second + 2..<second + 2 + length, with: bytes[at + 4..<second])
    return Data(swapped)
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec

@testable import CaskEngine

/// Stores whose puts of `obj U+0000 id` attach keys (Docs/FORMAT.md, "Version 5: attached
/// keys"), through a commit hook as the collections' is: the value is a comma-separated list of
/// texts, each attached as `U+0001 idx U+0000 text U+0000 id` (texts starting with `x` go into
/// a second group, `U+0001 idy`).
enum AttachedKeyFixture {
  static let options = CaskStore.Options(durability: .never, autoCompaction: nil)

  static func objectKey(_ id: String) -> String { "obj\u{0}\(id)" }

  /// The key `text` of object `id` is attached as.
  static func entryKey(_ text: String, _ id: String) -> String {
    (text.hasPrefix("x") ? "\u{1}idy" : "\u{1}idx") + "\u{0}\(text)\u{0}\(id)"
  }

  /// The keys a put of `value` under `key` attaches.
  static func attached(key: String, value: Data) -> [String] {
    guard key.hasPrefix("obj\u{0}") else { return [] }
    let id = String(key.dropFirst(4))
    return String(decoding: value, as: UTF8.self).split(separator: ",").map { entryKey(String($0), id) }
  }

  /// Opens (or creates) the store at `path` with the attaching hook installed.
  static func open(_ path: String, keys: RNCryptor.Keys, options: CaskStore.Options = options) throws -> CaskStore {
    let store = try CaskStore(path: path, keys: keys, options: options)
    store.extensions.setCommitHook { writes in
      var additions = CommitAdditions()
      for write in writes {
        guard let value = write.value else { continue }
        let keys = attached(key: write.key, value: value)
        if !keys.isEmpty { additions.attachments[write.key] = keys }
      }
      return additions
    }
    return store
  }

  /// Every key and value of `store`.
  static func contents(_ store: CaskStore) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    for key in try store.keys() { contents[key] = try store.get(key) }
    return contents
  }

  /// The segment files of the store at `path`, by name.
  static func segmentNames(_ path: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
  }

  /// Removes the hints and the checkpoint of the store at `path`, so that open scans.
  static func removeHintsAndCheckpoint(_ path: String) throws {
    for name in try FileManager.default.contentsOfDirectory(atPath: path)
    where name.hasSuffix(".hint") || name == CaskFormat.checkpointFileName {
      try FileManager.default.removeItem(atPath: "\(path)/\(name)")
    }
  }
}

/// What the directory of a store with attached keys must hold: each key's value, and for each
/// attached key the object it is attached to (`nil` for a key written on its own).
struct AttachedKeyModel {
  var values: [String: Data] = [:]
  var owners: [String: String] = [:]

  /// A put of `value` under `key`: the keys its old record attached (still attached to it)
  /// go, the new ones come.
  mutating func put(_ value: Data, forKey key: String) {
    dropAttached(of: key)
    values[key] = value
    owners[key] = nil
    for entry in AttachedKeyFixture.attached(key: key, value: value) {
      dropAttached(of: entry)
      values[entry] = Data()
      owners[entry] = key
    }
  }

  mutating func delete(_ key: String) {
    dropAttached(of: key)
    values[key] = nil
    owners[key] = nil
  }

  private mutating func dropAttached(of owner: String) {
    for (entry, holder) in owners where holder == owner {
      values[entry] = nil
      owners[entry] = nil
    }
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// What the checkpoint tests share: stores opened with fixed keys (no derivation), small
/// segments, checkpoints from the first key on, and copies of store directories.
enum CheckpointFixture {
  static let keys = try! RNCryptor.Keys(
    encryptionKey: Data(repeating: 0x5A, count: 32), hmacKey: Data(repeating: 0xA5, count: 32))

  /// Small segments, no automatic compaction, a checkpoint at every seal and close (and after
  /// `interval` bytes), whatever the store's size and however close together.
  static func options(interval: UInt64 = 1 << 40, segmentSize: UInt64 = 16 << 10, readOnly: Bool = false)
    -> CaskStore.Options
  {
    var options = CaskStore.Options(durability: .never, segmentSizeLimit: segmentSize, autoCompaction: nil)
    options.readOnly = readOnly
    options.checkpoints = CaskStore.Checkpoints(interval: interval, minimumKeys: 1, spacing: 0)
    return options
  }

  static func open(_ path: String, interval: UInt64 = 1 << 40, readOnly: Bool = false, checks: Bool = true)
    throws -> CaskStore
  {
    var options = options(interval: interval, readOnly: readOnly)
    options.checksCheckpoint = checks
    return try CaskStore(path: path, keys: keys, options: options)
  }

  /// The checkpoint file of the store at `path`.
  static func file(_ path: String) -> String { "\(path)/\(CaskFormat.checkpointFileName)" }

  /// Copies the files of the store at `source` into a new directory `destination`.
  static func copy(_ source: String, to destination: String) throws {
    let manager = FileManager.default
    try manager.createDirectory(atPath: destination, withIntermediateDirectories: true)
    for name in try manager.contentsOfDirectory(atPath: source) where name != CaskFormat.lockFileName {
      try manager.copyItem(atPath: "\(source)/\(name)", toPath: "\(destination)/\(name)")
    }
  }

  /// Every key the store serves, with its value.
  static func contents(of store: CaskStore) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    for key in try store.keys() { contents[key] = try store.get(key) }
    return contents
  }

  /// Fills a store: `count` keys in a group and outside, some overwritten and some deleted,
  /// over several segments; returns what it holds.
  @discardableResult
  static func fill(_ store: CaskStore, count: Int, seed: UInt64) throws -> [String: Data] {
    var random = SeededRandom(seed: seed)
    var model: [String: Data] = [:]
    for index in 0..<count {
      let key = index % 3 == 0 ? "users\u{0}\(index)" : "key-\(index)"
      let value = random.bytes(Int(random.next() % 300))
      try store.put(value, forKey: key)
      model[key] = value
    }
    for index in stride(from: 0, to: count, by: 7) {
      let key = index % 3 == 0 ? "users\u{0}\(index)" : "key-\(index)"
      try store.delete(key)
      model[key] = nil
    }
    for index in stride(from: 1, to: count, by: 5) {
      let key = index % 3 == 0 ? "users\u{0}\(index)" : "key-\(index)"
      let value = random.bytes(40)
      try store.put(value, forKey: key)
      model[key] = value
    }
    return model
  }
}

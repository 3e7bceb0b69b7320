import Foundation

/// The entries of one keyed container, found as they are asked for.
///
/// Synthesized `init(from:)`s ask for keys in the order `encode(to:)` wrote them, so the entry
/// after the last one found is tried first and, most of the time, is the one: a decode reads
/// each entry once. Any other key parses the rest of the container and searches it (a
/// dictionary of keys once there are many).
final class BinaryEntries {
  struct Entry {
    let keyStart: Int
    let keyCount: Int
    /// Where the value starts.
    let value: Int
  }

  let reader: BinaryReader
  let end: Int
  private(set) var entries: [Entry] = []
  /// Where the next entry not yet parsed starts.
  private var scanned: Int
  /// The entry expected next.
  private var cursor = 0
  private var index: [String: Int]?

  init(reader: BinaryReader, body: Range<Int>) {
    self.reader = reader
    self.end = body.upperBound
    self.scanned = body.lowerBound
    // One allocation for a typical struct: an entry takes at least 2 bytes (an empty key and null).
    entries.reserveCapacity(min(16, body.count / 2))
  }

  /// Parses one more entry; `false` at the end of the container.
  private func parseNext(path: BinaryReader.Path) throws -> Bool {
    guard scanned < end else { return false }
    var position = scanned
    let keyCount = try reader.length(at: &position, limit: end, path: path)
    let keyStart = position
    position += keyCount
    let valueEnd = try reader.end(ofValueAt: position, limit: end, path: path)
    entries.append(Entry(keyStart: keyStart, keyCount: keyCount, value: position))
    scanned = valueEnd
    return true
  }

  func parseAll(path: BinaryReader.Path) throws {
    while try parseNext(path: path) {}
  }

  /// The key of entry `entry`.
  func key(of entry: Entry) -> String {
    String(decoding: reader.bytes[entry.keyStart..<(entry.keyStart + entry.keyCount)], as: UTF8.self)
  }

  private func matches(_ entry: Entry, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
    guard entry.keyCount == key.count else { return false }
    return reader.bytes.withUnsafeBufferPointer { bytes in
      guard let base = key.baseAddress, let stored = bytes.baseAddress else { return true }  // both empty
      return memcmp(stored + entry.keyStart, base, key.count) == 0
    }
  }

  /// Where the value under `key` starts, or `nil` when there is none.
  func find(_ key: String, path: BinaryReader.Path) throws -> Int? {
    var key = key
    return try key.withUTF8 { utf8 -> Int? in
      var hasNext = cursor < entries.count
      if !hasNext { hasNext = try parseNext(path: path) }
      if hasNext {
        let entry = entries[cursor]
        if matches(entry, utf8) {
          cursor += 1
          return entry.value
        }
      }
      // The same key again: `decodeIfPresent` asks `contains`, then `decodeNil`, then `decode`.
      if cursor > 0, matches(entries[cursor - 1], utf8) { return entries[cursor - 1].value }
      try parseAll(path: path)
      let found: Int?
      if entries.count > 16 {
        if index == nil {
          var built: [String: Int] = [:]
          for (position, entry) in entries.enumerated() where built[self.key(of: entry)] == nil {
            built[self.key(of: entry)] = position
          }
          index = built
        }
        found = index?[String(decoding: utf8, as: UTF8.self)]
      } else {
        found = entries.indices.first { matches(entries[$0], utf8) }
      }
      guard let found else { return nil }
      cursor = found + 1
      return entries[found].value
    }
  }
}

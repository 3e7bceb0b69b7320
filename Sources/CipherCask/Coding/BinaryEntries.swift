import Foundation

/// The entries of one keyed container, found as they are asked for.
///
/// Synthesized `init(from:)`s ask for keys in the order `encode(to:)` wrote them, so the entry
/// after the last one found is tried first and, most of the time, is the one: a decode reads
/// each entry once and keeps no table. Any other key parses the whole container into a table
/// and searches it (through a dictionary of keys once there are many).
final class BinaryEntries {
  struct Entry {
    let keyStart: Int
    let keyCount: Int
    /// Where the value starts and ends.
    let value: Int
    let end: Int
  }

  /// The decoding whose container these entries are.
  let decoding: BinaryDecoding
  let reader: BinaryReader
  let start: Int
  let end: Int
  // `@exclusivity(unchecked)`: one container is read by one decode on one thread, and no
  // access to these escapes a method. Prevents: a run-time exclusivity check
  // (`swift_beginAccess`) at every field read.
  /// Where the entry expected next starts.
  @exclusivity(unchecked) private var next: Int
  /// The entry found last: `decodeIfPresent` asks `contains`, then `decodeNil`, then `decode`.
  @exclusivity(unchecked) private var last: Entry?
  /// Every entry, once a key was asked for out of order.
  private var table: [Entry]?
  private var index: [String: Int]?

  init(decoding: BinaryDecoding, body: Range<Int>) {
    self.decoding = decoding
    self.reader = decoding.reader
    self.start = body.lowerBound
    self.end = body.upperBound
    self.next = body.lowerBound
  }

  /// The entry at `offset`.
  private func entry(at offset: Int, path: BinaryReader.Path) throws -> Entry {
    var position = offset
    let keyCount = try reader.length(at: &position, limit: end, path: path)
    let value = position + keyCount
    let valueEnd = try reader.end(ofValueAt: value, limit: end, path: path)
    return Entry(keyStart: position, keyCount: keyCount, value: value, end: valueEnd)
  }

  /// Every entry, parsed once.
  func all(path: BinaryReader.Path) throws -> [Entry] {
    if let table { return table }
    var entries: [Entry] = []
    var position = start
    while position < end {
      let entry = try entry(at: position, path: path)
      entries.append(entry)
      position = entry.end
    }
    table = entries
    return entries
  }

  /// The key of `entry`.
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
      if next < end {
        let candidate = try entry(at: next, path: path)
        if matches(candidate, utf8) {
          next = candidate.end
          last = candidate
          return candidate.value
        }
      }
      if let last, matches(last, utf8) { return last.value }
      let entries = try all(path: path)
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
      next = entries[found].end
      last = entries[found]
      return entries[found].value
    }
  }
}

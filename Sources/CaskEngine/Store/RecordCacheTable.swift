/// The record cache's map from a location key (`RecordCache.key(of:)`: segment and offset in
/// one integer) to the position of its slot: open addressing with linear probing, each entry
/// holding its key and its slot together, at most half full.
///
/// Why not `Dictionary`: it hashes each key with SipHash and keeps keys and values in separate
/// arrays, so a lookup in a large cache touched three cache lines (a get at 1,000,000 keys
/// looks up, inserts and evicts). Location keys are not chosen by whoever writes values, so
/// a multiplicative hash spreads them well enough.
struct RecordCacheTable {
  private struct Entry {
    var key: UInt64
    /// The slot's position plus one; 0 marks an empty entry.
    var slot: UInt32
  }

  private var entries: [Entry]
  private var shift: UInt64
  private(set) var count = 0

  init() {
    entries = [Entry](repeating: Entry(key: 0, slot: 0), count: 64)
    shift = 64 - 6
  }

  private var mask: Int { entries.count - 1 }

  private func home(_ key: UInt64) -> Int {
    Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
  }

  /// The entry holding `key`, or the empty entry where it would go.
  private func probe(_ key: UInt64) -> (index: Int, found: Bool) {
    var index = home(key)
    while true {
      let entry = entries[index]
      if entry.slot == 0 { return (index, false) }
      if entry.key == key { return (index, true) }
      index = (index + 1) & mask
    }
  }

  /// The slot position of `key`, or `nil`.
  subscript(key: UInt64) -> Int? {
    let (index, found) = probe(key)
    return found ? Int(entries[index].slot) - 1 : nil
  }

  /// Sets the slot position of `key`, adding the key when it is not there.
  mutating func set(_ slot: Int, for key: UInt64) {
    let (index, found) = probe(key)
    entries[index] = Entry(key: key, slot: UInt32(slot + 1))
    guard !found else { return }
    count += 1
    if count * 2 > entries.count { grow() }
  }

  /// Removes `key`, shifting back the entries of its probe run so that none is cut off from
  /// its home (no tombstones).
  mutating func remove(_ key: UInt64) {
    var (hole, found) = probe(key)
    guard found else { return }
    count -= 1
    var next = hole
    while true {
      next = (next + 1) & mask
      let entry = entries[next]
      if entry.slot == 0 { break }
      let home = home(entry.key)
      // The entry may fill the hole unless its home lies after the hole, up to itself.
      let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
      if stays { continue }
      entries[hole] = entry
      hole = next
    }
    entries[hole] = Entry(key: 0, slot: 0)
  }

  private mutating func grow() {
    let old = entries
    entries = [Entry](repeating: Entry(key: 0, slot: 0), count: old.count * 2)
    shift -= 1
    for entry in old where entry.slot != 0 {
      entries[probe(entry.key).index] = entry
    }
  }
}

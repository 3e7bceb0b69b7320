import Foundation

/// How many keys a hint's puts add to each table of the index: what open sizes the tables
/// with, once, before it indexes any hint. Never trusted for anything else.
struct HintSizes: Sendable, Equatable {
  /// One group and the number of put entries whose key is in it.
  struct Group: Sendable, Equatable {
    var name: [UInt8]
    var puts: Int
  }

  /// Put entries whose key has no U+0000.
  var ungrouped = 0
  /// Put entries of each group listed (a grouped hint lists the largest groups that fit in
  /// its first 4,096 bytes; keys of a group left out are indexed all the same).
  var groups: [Group] = []

  /// The sizes of `all` added up, group by group.
  static func total(_ all: [HintSizes]) -> HintSizes {
    var total = HintSizes()
    var byName: [[UInt8]: Int] = [:]
    for sizes in all {
      total.ungrouped += sizes.ungrouped
      for group in sizes.groups { byName[group.name, default: 0] += group.puts }
    }
    total.groups = byName.map { Group(name: $0.key, puts: $0.value) }
    return total
  }

  /// Appends the group section of a grouped hint's payload (ungrouped puts, the groups
  /// listed, largest first, as many as end within `CaskFormat.hintSizingLength` bytes of
  /// the payload) to `payload`, whose header is written up to the entry count.
  func appendSection(to payload: inout ByteWriter, tagLength: Int) {
    payload.append(UInt32(clamping: ungrouped))
    var room = CaskFormat.hintSizingLength - tagLength - CaskFormat.hintGroupedHeaderLength
    let ordered = groups.sorted { $0.puts != $1.puts ? $0.puts > $1.puts : $0.name.lexicographicallyPrecedes($1.name) }
    var listed: [Group] = []
    for group in ordered where group.name.count + CaskFormat.hintGroupFixedLength <= room {
      listed.append(group)
      room -= group.name.count + CaskFormat.hintGroupFixedLength
    }
    payload.append(UInt16(listed.count))
    for group in listed {
      payload.append(UInt32(clamping: group.puts))
      payload.append(UInt16(group.name.count))
      payload.append(contentsOf: group.name)
    }
  }

  /// Reads a group section from `reader` (just after the entry count), each count cut to
  /// `bound` in all. Without `complete`, a section cut short by the end of `reader` gives the
  /// groups read so far (open reads only the first blocks of each hint).
  ///
  /// - Returns: `nil` when the section is malformed (or, with `complete`, cut short).
  static func readSection(from reader: inout ByteReader, bound: Int, complete: Bool) -> HintSizes? {
    guard let ungrouped = reader.readUInt32(), let listed = reader.readUInt16() else { return nil }
    var budget = bound
    var sizes = HintSizes()
    sizes.ungrouped = min(Int(ungrouped), budget)
    budget -= sizes.ungrouped
    for _ in 0..<listed {
      guard let puts = reader.readUInt32(), let length = reader.readUInt16(), let name = reader.readBytes(Int(length))
      else { return complete ? nil : sizes }
      let granted = min(Int(puts), budget)
      budget -= granted
      sizes.groups.append(Group(name: Array(name), puts: granted))
    }
    return sizes
  }
}

/// Counts put keys by group, for a hint's group section. Keys of one group mostly come in
/// runs (a collection's objects, then an index's entries), so the last group is compared by
/// its bytes before any dictionary is asked.
struct GroupCounter {
  private var ungrouped = 0
  private var counts: [[UInt8]: Int] = [:]
  private var lastName: [UInt8] = []
  private var lastCount = 0

  mutating func add(_ key: UnsafeRawBufferPointer) {
    guard let base = key.baseAddress, let zero = memchr(base, Int32(CaskFormat.keyGroupSeparator), key.count) else {
      ungrouped += 1
      return
    }
    let name = UnsafeRawBufferPointer(start: base, count: base.distance(to: UnsafeRawPointer(zero)))
    if lastCount > 0, lastName.count == name.count, lastName.elementsEqual(name) {
      lastCount += 1
      return
    }
    flush()
    lastName = Array(name)
    lastCount = 1
  }

  private mutating func flush() {
    if lastCount > 0 { counts[lastName, default: 0] += lastCount }
    lastCount = 0
  }

  var sizes: HintSizes {
    var copy = self
    copy.flush()
    return HintSizes(
      ungrouped: ungrouped, groups: copy.counts.map { HintSizes.Group(name: $0.key, puts: $0.value) })
  }
}

/// A set of ids held as their UTF-8 bytes, packed, in an open-addressing table: what a walk
/// of a sort index tests each walked id against when a driver's ids were collected first
/// (`QueryPlan.testsDriverByIDs`). A test hashes the id's bytes as they lie in the entry, with
/// no `String` made and no search of the driver's entries.
///
/// - Complexity: insert and `contains`, O(length of the id) expected.
struct IDSet: Sendable {
  /// The ids' bytes, one after another.
  private var bytes: [UInt8] = []
  /// Where each id starts in `bytes`; the last element is `bytes.count`.
  private var starts: [Int] = [0]
  /// Two words per slot: 0 for empty, or `slotValue` (the id's number, its length and part of
  /// its hash), then `lastWord` of the id. A probe passes over another id by comparing these,
  /// and reads the id's bytes (elsewhere in memory, two more cache misses) only for an id of
  /// over eight bytes that agrees in all of them: an id of at most eight is told by its slot
  /// alone. A power of two of slots, at most half of them full.
  private var slots: [UInt64]
  /// One bit per `filterHash` value's top bits, set for each id's: most ids a walk tests are
  /// not in the set, and are told so by one bit of an array that stays in the cache, where
  /// the slots (eight times the bytes per id) would miss it.
  private var filter: [UInt64]
  /// The right shift of a `filterHash` that leaves its bit's number in `filter`.
  private var filterShift: UInt64
  /// How many ids are shorter than eight bytes. With none, every id's bit in `filter` is that
  /// of its last eight bytes alone, which are an entry's last eight bytes: a walk tests an
  /// entry without finding where its id starts (`mayHoldID(endingWith:)`).
  private(set) var shortIDCount = 0
  /// Mixed into every hash, so that which ids share a slot differs from set to set.
  private let seed = UInt64.random(in: 0...UInt64.max)

  /// An empty set with room for about `capacity` ids before it grows.
  init(capacity: Int) {
    var size = 16
    while size < 2 * capacity { size *= 2 }
    slots = [UInt64](repeating: 0, count: 2 * size)
    starts.reserveCapacity(capacity + 1)
    bytes.reserveCapacity(capacity * 16)
    // Eight bits per slot: about one id in 16 not in the set passes the filter.
    filter = [UInt64](repeating: 0, count: size / 8)
    filterShift = UInt64(64 - (size * 8).trailingZeroBitCount)
  }

  /// The ids of `source`'s entries in `bounds`, of which there are about `capacity`.
  ///
  /// - Complexity: O(m) for the m entries in the bounds.
  init(_ source: IndexSource, in bounds: EntryBounds, capacity: Int) throws {
    self.init(capacity: capacity)
    try source.idBytes(in: bounds) { id in
      insert(id)
      return true
    }
  }

  /// The number of ids.
  var count: Int { starts.count - 1 }

  /// The slot holding the id of hash `hash` and bytes `id`, or the empty slot where it would
  /// go, and whether it holds it.
  @inline(__always)
  private func slot(of id: UnsafeRawBufferPointer, hash: UInt64) -> (slot: Int, found: Bool) {
    slots.withUnsafeBufferPointer { slots in
      bytes.withUnsafeBytes { bytes in
        starts.withUnsafeBufferPointer { starts in
          let mask = slots.count / 2 - 1
          let high = Self.slotValue(hash: hash, length: id.count, number: -1) >> 40
          let last = Self.lastWord(id)
          var slot = Int(truncatingIfNeeded: hash) & mask
          while true {
            let value = slots[2 * slot]
            if value == 0 { return (slot, false) }
            if value >> 40 == high, slots[2 * slot + 1] == last {
              // The same length and last eight bytes: all of an id of up to eight.
              if id.count <= 8 { return (slot, true) }
              let number = Int(truncatingIfNeeded: value & 0xFF_FFFF_FFFF) - 1
              let stored = UnsafeRawBufferPointer(rebasing: bytes[starts[number]..<starts[number + 1]])
              if compareRaw(stored, id) == 0 { return (slot, true) }
            }
            slot = (slot + 1) & mask
          }
        }
      }
    }
  }

  /// The word of `filter` and the bit in it for `hash`.
  @inline(__always)
  private func filterBit(_ hash: UInt64) -> (word: Int, bit: UInt64) {
    let number = Int(truncatingIfNeeded: hash >> filterShift)
    return (number >> 6, 1 << UInt64(number & 63))
  }

  /// Adds `id` (its UTF-8 bytes) if it is not there.
  mutating func insert(_ id: UnsafeRawBufferPointer) {
    let hash = Self.hash(id, seed: seed)
    let (found, present) = slot(of: id, hash: hash)
    guard !present else { return }
    // As typed bytes: a raw buffer is appended a byte at a time, a typed one copied whole.
    bytes.append(contentsOf: id.assumingMemoryBound(to: UInt8.self))
    starts.append(bytes.count)
    if id.count < 8 { shortIDCount += 1 }
    slots[2 * found] = Self.slotValue(hash: hash, length: id.count, number: count - 1)
    slots[2 * found + 1] = Self.lastWord(id)
    let (word, bit) = filterBit(Self.filterHash(id, seed: seed))
    filter[word] |= bit
    if 4 * count > slots.count { grow() }
  }

  /// Whether `id` (its UTF-8 bytes) is in the set.
  @inline(__always)
  func contains(_ id: UnsafeRawBufferPointer) -> Bool {
    let (word, bit) = filterBit(Self.filterHash(id, seed: seed))
    guard filter.withUnsafeBufferPointer({ $0[word] & bit != 0 }) else { return false }
    return slot(of: id, hash: Self.hash(id, seed: seed)).found
  }

  /// Whether an id of at least eight bytes whose last eight are `last` (as loaded, unaligned,
  /// in the machine's order) may be in the set: false only when none is. Answers for every
  /// id only while `shortIDCount` is 0.
  @inline(__always)
  func mayHoldID(endingWith last: UInt64) -> Bool {
    let (word, bit) = filterBit(Self.filterHash(lastWord: last, seed: seed))
    return filter.withUnsafeBufferPointer { $0[word] & bit != 0 }
  }

  /// Doubles the slots (and the filter) and places every id again.
  private mutating func grow() {
    // Twice the slots: as many as there were words.
    let size = slots.count
    var placed = [UInt64](repeating: 0, count: 2 * size)
    filter = [UInt64](repeating: 0, count: size / 8)
    filterShift = UInt64(64 - (size * 8).trailingZeroBitCount)
    for number in 0..<count {
      let (hash, filterHash, length, last) = bytes.withUnsafeBytes {
        let id = UnsafeRawBufferPointer(rebasing: $0[starts[number]..<starts[number + 1]])
        return (Self.hash(id, seed: seed), Self.filterHash(id, seed: seed), id.count, Self.lastWord(id))
      }
      // The ids are distinct: the first empty slot is the place.
      var slot = Int(truncatingIfNeeded: hash) & (size - 1)
      while placed[2 * slot] != 0 { slot = (slot + 1) & (size - 1) }
      placed[2 * slot] = Self.slotValue(hash: hash, length: length, number: number)
      placed[2 * slot + 1] = last
      let (word, bit) = filterBit(filterHash)
      filter[word] |= bit
    }
    slots = placed
  }

  /// What a slot's first word holds for id `number` of hash `hash` and `length` bytes: the
  /// number plus one in the low 40 bits (more ids than memory could hold), the length (up to
  /// 255) in the 8 above, and 16 bits of the hash that the slot (its low bits, in a set of up
  /// to 65,536 slots) is not chosen by at the top: ids that share a slot mostly differ there.
  @inline(__always)
  private static func slotValue(hash: UInt64, length: Int, number: Int) -> UInt64 {
    let tag = (hash >> 16) & 0xFFFF
    return tag << 48 | UInt64(min(length, 255)) << 40 | UInt64(truncatingIfNeeded: number + 1) & 0xFF_FFFF_FFFF
  }

  /// An id's last eight bytes as loaded (unaligned, in the machine's order), or all of a
  /// shorter id, zero-padded: with its length, the whole of an id of up to eight bytes.
  @inline(__always)
  private static func lastWord(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    if bytes.count >= 8 { return bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self) }
    var word: UInt64 = 0
    for index in 0..<bytes.count { word |= UInt64(bytes[index]) << (8 * UInt64(index)) }
    return word
  }

  /// The hash whose top bits choose an id's bit of `filter`: its last eight bytes alone, or
  /// all of a shorter id, zero-padded, with its length multiplied in. Cheaper than `hash`,
  /// which only the ids that pass the filter need; ids that share their last eight bytes
  /// share a bit, and are told apart by the slots.
  @inline(__always)
  private static func filterHash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
    if bytes.count >= 8 {
      return filterHash(lastWord: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self), seed: seed)
    }
    var word: UInt64 = 0
    for index in 0..<bytes.count { word |= UInt64(bytes[index]) << (8 * UInt64(index)) }
    let mixed = (word ^ seed) &* 0x9E37_79B9_7F4A_7C15 &+ UInt64(truncatingIfNeeded: bytes.count)
    return mixed &* 0xBF58_476D_1CE4_E5B9
  }

  /// `filterHash` of an id of at least eight bytes whose last eight are `word`.
  @inline(__always)
  private static func filterHash(lastWord word: UInt64, seed: UInt64) -> UInt64 {
    ((word ^ seed) &* 0x9E37_79B9_7F4A_7C15) &* 0xBF58_476D_1CE4_E5B9
  }

  /// A 64-bit hash of `bytes`: eight bytes at a time, each word multiplied in and folded; an
  /// id of 8 to 16 bytes (most are) as its first and last eight, two loads and no loop.
  @inline(__always)
  private static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
    var hash = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
    @inline(__always) func mix(_ word: UInt64) {
      hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
      hash ^= hash >> 31
    }
    if bytes.count >= 8, bytes.count <= 16 {
      mix(bytes.loadUnaligned(as: UInt64.self))
      mix(bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
    } else {
      var start = 0
      while start < bytes.count {
        var word: UInt64 = 0
        if bytes.count - start >= 8 {
          word = bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)
        } else {
          for index in start..<bytes.count { word |= UInt64(bytes[index]) << (8 * UInt64(index - start)) }
        }
        mix(word)
        start += 8
      }
    }
    hash &*= 0x94D0_49BB_1331_11EB
    return hash ^ (hash >> 29)
  }
}

/// The sets of ids kept with one index's entries in memory (`IndexRuntime.EntriesBox`), as a
/// plan found them: the generation of its copy of the entries, which a kept set must be of.
struct IDSetCache: Sendable {
  let runtime: IndexRuntime
  let box: IndexRuntime.EntriesBox
  let generation: UInt64

  /// The set of the ids in `bounds` kept for the plan's generation, if any.
  func set(in bounds: EntryBounds) -> IDSet? {
    runtime.state.withLock { _ in box.idSet(in: bounds, at: generation) }
  }

  /// Keeps `set`, collected from the plan's copy of the entries, unless they changed since.
  func keep(_ set: IDSet, in bounds: EntryBounds) {
    runtime.state.withLock { _ in box.keep(set, in: bounds, at: generation) }
  }
}

extension QueryPlan.Indexed {
  /// The ids of the entries in `bounds`, of which there are about `capacity`: kept from an
  /// earlier query of the same entries (none changed since), else collected and kept.
  ///
  /// - Complexity: O(1) when kept; else O(m) for the m entries in the bounds.
  func idSet(in bounds: EntryBounds, capacity: Int) throws -> IDSet {
    if let kept = idSets?.set(in: bounds) { return kept }
    let set = try IDSet(entries, in: bounds, capacity: capacity)
    idSets?.keep(set, in: bounds)
    return set
  }
}

extension IndexSource {
  /// `entryBytes(in:descending:skipping:body:)` for the ids in `members` only (every id
  /// unless `testsMembers`), the first `skipping` of those left out. Not generic, unlike the
  /// query that calls it, so that the test of each walked id is compiled into the walk:
  /// through a generic closure it cost several times the test itself.
  func entryBytes(
    in bounds: EntryBounds, descending: Bool, members: IDSet, testsMembers: Bool, skipping: Int,
    body: (_ text: UnsafeRawBufferPointer, _ id: UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    if testsMembers, case .memory(let entries) = self {
      try entries.memberIDs(in: bounds, descending: descending, members: members, skipping: skipping, body: body)
      return
    }
    var left = skipping
    try entryBytes(in: bounds, descending: descending) { text, id in
      if testsMembers, !members.contains(id) { return true }
      guard left == 0 else {
        left -= 1
        return true
      }
      return try body(text, id)
    }
  }
}

extension IndexEntries {
  /// The texts and ids of the entries in `bounds` whose ids `members` holds, in entry order
  /// (the reverse with `descending`), the first `skipping` of them left out, until `body`
  /// returns false.
  /// Each chunk's bytes are read in place and each entry's id tested in one loop, with no call
  /// per entry: such a walk passes about 20 entries per id handed over when the members are a
  /// twentieth of the entries, and the calls per entry were half of its cost.
  ///
  /// - Complexity: O(log n) to find the bounds, then O(1) expected per entry passed.
  func memberIDs(
    in bounds: EntryBounds, descending: Bool, members: IDSet, skipping: Int,
    body: (_ text: UnsafeRawBufferPointer, _ id: UnsafeRawBufferPointer) throws -> Bool
  ) rethrows {
    let (start, end) = positions(of: bounds)
    let chunks = sorted.chunks
    guard start.chunk < chunks.count else { return }
    let last = min(end.chunk, chunks.count - 1)
    guard start.chunk <= last else { return }
    var left = skipping
    // Without ids under eight bytes in the set, an entry is first tested by its last eight
    // bytes, which end its id: most entries a walk passes are not members, and are passed
    // over without a search for the U+0000 that starts their id.
    let byLastWord = members.shortIDCount == 0
    for step in 0...(last - start.chunk) {
      let chunk = descending ? last - step : start.chunk + step
      let lower = chunk == start.chunk ? start.index : 0
      let upper = chunk == end.chunk ? end.index : chunks[chunk].count
      guard lower < upper else { continue }
      let more = try chunks[chunk].bytes.withUnsafeBytes { all in
        try chunks[chunk].ends.withUnsafeBufferPointer { ends in
          var index = descending ? upper - 1 : lower
          while index >= lower, index < upper {
            let entry = UnsafeRawBufferPointer(
              rebasing: all[(index == 0 ? 0 : Int(ends[index - 1]))..<Int(ends[index])])
            index += descending ? -1 : 1
            if byLastWord {
              // Shorter, its id is too: not a member.
              guard entry.count >= 8,
                members.mayHoldID(endingWith: entry.loadUnaligned(fromByteOffset: entry.count - 8, as: UInt64.self))
              else { continue }
            }
            // An element without an id (none is written so) is passed over.
            guard let (text, id) = EntryIDKey.split(entry: entry), members.contains(id) else { continue }
            guard left == 0 else {
              left -= 1
              continue
            }
            guard try body(text, id) else { return false }
          }
          return true
        }
      }
      guard more else { return }
    }
  }
}

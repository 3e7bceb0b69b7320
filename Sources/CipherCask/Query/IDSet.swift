/// A set of ids held as their UTF-8 bytes, packed, in an open-addressing table: what a walk
/// of a sort index tests each walked id against when a driver's ids were collected first
/// (`QueryPlan.testsDriverByIDs`). A test hashes the id's bytes as they lie in the entry, with
/// no `String` made and no search of the driver's entries.
///
/// - Complexity: insert and `contains`, O(length of the id) expected.
struct IDSet {
  /// The ids' bytes, one after another.
  private var bytes: [UInt8] = []
  /// Where each id starts in `bytes`; the last element is `bytes.count`.
  private var starts: [Int] = [0]
  /// Per slot, 0 for empty or the id's number plus one; a power of two of slots, at most
  /// half of them full.
  private var slots: [Int32]
  /// Mixed into every hash, so that which ids share a slot differs from set to set.
  private let seed = UInt64.random(in: 0...UInt64.max)

  /// An empty set with room for about `capacity` ids before it grows.
  init(capacity: Int) {
    var size = 16
    while size < 2 * capacity { size *= 2 }
    slots = [Int32](repeating: 0, count: size)
  }

  /// The number of ids.
  var count: Int { starts.count - 1 }

  /// The bytes of id `number`.
  private func withID<R>(_ number: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[starts[number]..<starts[number + 1]])) }
  }

  /// The slot holding `id`, or the empty slot where it would go.
  private func slot(of id: UnsafeRawBufferPointer) -> Int {
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: Self.hash(id, seed: seed)) & mask
    while slots[slot] != 0 {
      if withID(Int(slots[slot]) - 1, { compareRaw($0, id) == 0 }) { return slot }
      slot = (slot + 1) & mask
    }
    return slot
  }

  /// Adds `id` (its UTF-8 bytes) if it is not there.
  mutating func insert(_ id: UnsafeRawBufferPointer) {
    let found = slot(of: id)
    guard slots[found] == 0 else { return }
    bytes.append(contentsOf: id)
    starts.append(bytes.count)
    slots[found] = Int32(count)
    if 2 * count > slots.count { grow() }
  }

  /// Whether `id` (its UTF-8 bytes) is in the set.
  func contains(_ id: UnsafeRawBufferPointer) -> Bool {
    slots[slot(of: id)] != 0
  }

  /// Doubles the slots and places every id again.
  private mutating func grow() {
    slots = [Int32](repeating: 0, count: slots.count * 2)
    for number in 0..<count {
      let place = withID(number) { slot(of: $0) }
      slots[place] = Int32(number + 1)
    }
  }

  /// A 64-bit hash of `bytes`: eight bytes at a time, each word multiplied in and folded.
  private static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> UInt64 {
    var hash = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
    var start = 0
    while start < bytes.count {
      var word: UInt64 = 0
      if bytes.count - start >= 8 {
        word = bytes.loadUnaligned(fromByteOffset: start, as: UInt64.self)
      } else {
        for index in start..<bytes.count { word |= UInt64(bytes[index]) << (8 * UInt64(index - start)) }
      }
      hash = (hash ^ word) &* 0xBF58_476D_1CE4_E5B9
      hash ^= hash >> 31
      start += 8
    }
    hash &*= 0x94D0_49BB_1331_11EB
    return hash ^ (hash >> 29)
  }
}

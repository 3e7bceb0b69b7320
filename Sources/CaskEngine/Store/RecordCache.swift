import Foundation

/// A bounded cache of whole records as they are on disk — sealed, never plaintext — by their
/// location, so that a hot `get` needs no system call (`Options.recordCacheBytes`).
///
/// A location names one record for ever: the log only grows, records are cached only once the
/// index points at them (so never a record a failed or aborted write leaves behind and the next
/// write overwrites), compaction writes new segments, and segment ids are never handed out
/// again. A cached record is authenticated again on every read, like one read from disk.
///
/// Eviction is CLOCK: each entry has a bit set when it is read; the hand clears set bits and
/// evicts the first entry it finds clear, which keeps a hot set against a stream of misses
/// at O(1) per insertion. Once the cache is full, only one miss in `admissionInterval` is
/// kept. Prevents: a store much larger than the cache, read at random, paying on every get
/// for an eviction and an insertion that almost never serve a later get (as good as none
/// at 1,000,000 keys). A key read again and again still gets in after a few misses.
final class RecordCache: Sendable {
  private struct Slot {
    var location: RecordLocation
    var record: RecordBytes
    var referenced: Bool
  }

  private struct State {
    var slots: [Slot] = []
    /// Slot index by `key(of:)`: segment and offset, which name one record (its length adds
    /// nothing).
    var slotOf = RecordCacheTable()
    var hand = 0
    var bytes = 0
    /// Misses passed over since the last one a full cache kept.
    var passedOver = 0
  }

  /// A full cache keeps one miss in this many.
  static let admissionInterval = 4

  /// Bytes of records kept at most (each entry also costs some 80 bytes of bookkeeping, which
  /// counts against it too).
  let capacity: Int
  private let state = Locked(State())

  /// What one entry costs beyond its record's bytes: the slot, the dictionary entry, the
  /// array's header.
  static let entryOverhead = 80

  init(capacity: Int) {
    self.capacity = capacity
  }

  /// A location as one integer: its segment and offset.
  private static func key(of location: RecordLocation) -> UInt64 {
    UInt64(location.segment) << 32 | UInt64(location.offset)
  }

  /// Runs `body` on the cached record at `location`, or returns `nil` when it is not cached.
  func withRecord<Result>(
    at location: RecordLocation, _ body: (UnsafeRawBufferPointer) throws -> Result
  ) rethrows -> Result? {
    let record = state.withLock { state -> RecordBytes? in
      guard let slot = state.slotOf[Self.key(of: location)] else { return nil }
      state.slots[slot].referenced = true
      return state.slots[slot].record
    }
    guard let record else { return nil }
    return try record.withUnsafeBytes(body)
  }

  /// Keeps a copy of `record`, the bytes at `location` (see `insert(_:at:)` for which are kept).
  func insert(_ record: UnsafeRawBufferPointer, at location: RecordLocation) {
    guard accepts(length: record.count) else { return }
    insert(RecordBytes.copy(of: record), at: location)
  }

  /// Whether a record of `length` bytes may be kept: not one larger than a quarter of the
  /// cache, which would push out many small ones.
  func accepts(length: Int) -> Bool {
    length + Self.entryOverhead <= capacity / 4
  }

  /// Keeps `record`, the bytes at `location` (the array itself, not a copy), evicting others
  /// as needed; when the cache is full, only one call in `admissionInterval` is kept.
  func insert(_ record: RecordBytes, at location: RecordLocation) {
    let cost = record.count + Self.entryOverhead
    guard cost <= capacity / 4 else { return }
    state.withLock { state in
      guard state.slotOf[Self.key(of: location)] == nil else { return }
      if state.bytes + cost > capacity {
        state.passedOver += 1
        guard state.passedOver >= Self.admissionInterval else { return }
        state.passedOver = 0
      }
      while state.bytes + cost > capacity, !state.slots.isEmpty {
        evictOne(&state)
      }
      state.slotOf.set(state.slots.count, for: Self.key(of: location))
      state.slots.append(Slot(location: location, record: record, referenced: false))
      state.bytes += cost
    }
  }

  /// Forgets every record (at close).
  func removeAll() {
    state.withLock { $0 = State() }
  }

  /// Bytes held, bookkeeping included.
  var bytes: Int { state.withLock { $0.bytes } }

  /// Moves the hand past referenced entries (clearing them) and evicts the first clear one,
  /// moving the last slot into its place.
  private func evictOne(_ state: inout State) {
    if state.hand >= state.slots.count { state.hand = 0 }
    while state.slots[state.hand].referenced {
      state.slots[state.hand].referenced = false
      state.hand = (state.hand + 1) % state.slots.count
    }
    let victim = state.hand
    state.bytes -= state.slots[victim].record.count + Self.entryOverhead
    state.slotOf.remove(Self.key(of: state.slots[victim].location))
    let last = state.slots.count - 1
    if victim != last {
      state.slots[victim] = state.slots[last]
      state.slotOf.set(victim, for: Self.key(of: state.slots[victim].location))
    }
    state.slots.removeLast()
  }
}

/// The decoded sorted pages of a checkpoint kept in memory, at most `limit` bytes of them
/// (`SortedPage.memoryCost`), the least recently used dropped first. Shared by every sorted
/// group of a store and by every copy of its index; a page is read, authenticated and decoded
/// again after it was dropped, so what the cache holds is only ever what the file held.
///
/// A page is decoded outside the lock: two readers missing the same page may both decode it,
/// and one copy is kept. A page bigger than the whole limit is handed over but not kept.
package final class SortedPageCache: Sendable {
  private struct Entry {
    var page: SortedPage
    var lastUse: UInt64
  }

  private struct State {
    var entries: [Int: Entry] = [:]
    var bytes = 0
    var clock: UInt64 = 0
    var loads = 0
  }

  /// The most bytes of pages kept.
  package let limit: Int
  private let state = Locked(State())

  package init(limit: Int) {
    self.limit = max(0, limit)
  }

  /// Bytes of pages held now.
  package var bytes: Int { state.withLock { $0.bytes } }

  /// Pages read and decoded so far (misses).
  package var loads: Int { state.withLock { $0.loads } }

  /// Page `number`, from memory or made by `load` (which reads and checks it).
  ///
  /// - Throws: what `load` throws; nothing is kept then.
  /// - Complexity: O(1) on a hit; on a miss, the load plus O(pages held) to find what to drop.
  func page(_ number: Int, load: () throws -> SortedPage) rethrows -> SortedPage {
    let found = state.withLock { state -> SortedPage? in
      state.clock += 1
      guard var entry = state.entries[number] else { return nil }
      entry.lastUse = state.clock
      state.entries[number] = entry
      return entry.page
    }
    if let found { return found }
    let page = try load()
    let cost = page.memoryCost
    state.withLock { state in
      state.loads += 1
      guard cost <= limit, state.entries[number] == nil else { return }
      while state.bytes + cost > limit, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
        state.entries[oldest.key] = nil
        state.bytes -= oldest.value.page.memoryCost
      }
      state.clock += 1
      state.entries[number] = Entry(page: page, lastUse: state.clock)
      state.bytes += cost
    }
    return page
  }
}

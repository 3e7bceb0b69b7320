import Foundation
import Synchronization

/// The arena of a table loaded from a checkpoint (Docs/FORMAT.md, section 18): its chunks of
/// long keys are reserved whole at open (memory that is never touched costs nothing), and each
/// is read, checked and decrypted the first time a key in it is needed: a probe that compares
/// a long key, a walk that hands one out, packing, or the next checkpoint's writer (a new key
/// goes into a new chunk, `KeyArena.append`). No byte of a chunk is read before its load
/// returned.
extension KeyArena {
  /// Where an arena's chunks are in a checkpoint.
  struct ChunkSource: Sendable {
    let pages: CheckpointPages
    /// The table's number in the root (the pages name it).
    let table: Int
    /// The number of the table's first chunk page among the file's pages.
    let firstPage: Int
    /// The group's name for a group's table, `nil` for the table of keys outside groups:
    /// every long key must be of it.
    let group: [UInt8]?
    /// What the keys hash with: a long key's meta word must be its hash.
    let hashKey: KeyHashKey
    /// A sorted group's table: its chunks have no pages and are made again from its sorted
    /// pages; `nil` for another table.
    var sorted: SortedChunks? = nil
  }

  /// Where a sorted group's chunks are: the keys of its sorted pages (through `base`, whose
  /// cache they pass through) behind the group's `name` and U+0000, chunk `c` from rank
  /// `starts[c]` of the group's keys on.
  struct SortedChunks: Sendable {
    let base: SortedGroupBase
    let name: [UInt8]
    let starts: [Int]
  }

  /// Which chunks of one `Storage` are loaded. Shared by nothing: a copy of the storage gets
  /// a copy of this (`Storage.copy`), and the two load their missing chunks on their own.
  ///
  /// Concurrency: as `KeyTable.LazyPages` (Docs/ARCHITECTURE.md, section 9, rule 16): the
  /// store loads chunks under its `state` lock, the checkpoint writer on the hint queue with
  /// no store lock held; `lock` serialises the loads and the copy, and `complete` lets a fully
  /// loaded arena skip it. Inside it only the pages' own failure record and, for a sorted
  /// group's chunks, the sorted page cache's lock (a leaf, held only to look up or keep a page)
  /// are taken.
  final class LazyChunks: @unchecked Sendable {
    let source: ChunkSource
    let chunkCount: Int
    private let lock = NSLock()
    // Guarded by `lock`: 0 not loaded, 1 loaded, 2 failed (and never read again).
    private var states: [UInt8]
    private var missing: Int
    /// Whether every chunk is loaded: the fast path of `ensureLoaded(chunk:)`.
    let complete = Atomic<Bool>(false)
    /// Whether every long key of the table was checked against its group and hash
    /// (`KeyTable.loadEverything`): the walks that hand keys out check each one until then.
    let keysChecked = Atomic<Bool>(false)

    init(source: ChunkSource, chunkCount: Int) {
      self.source = source
      self.chunkCount = chunkCount
      states = [UInt8](repeating: 0, count: chunkCount)
      missing = chunkCount
      if chunkCount == 0 { complete.store(true, ordering: .releasing) }
    }

    private init(copying other: LazyChunks) {
      source = other.source
      chunkCount = other.chunkCount
      states = other.states
      missing = other.missing
      complete.store(other.complete.load(ordering: .acquiring), ordering: .releasing)
      keysChecked.store(other.keysChecked.load(ordering: .acquiring), ordering: .releasing)
    }

    /// The numbers of the chunks loaded so far.
    var loadedChunks: [Int] {
      lock.lock()
      defer { lock.unlock() }
      return states.indices.filter { states[$0] == 1 }
    }

    /// Whether chunk `chunk` is loaded.
    func isLoaded(_ chunk: Int) -> Bool {
      lock.lock()
      defer { lock.unlock() }
      return states[chunk] == 1
    }

    /// The page of the checkpoint that holds chunk `chunk` (for a sorted group's, the sorted
    /// page that holds its first key).
    func page(of chunk: Int) -> Int {
      guard let sorted = source.sorted else { return source.firstPage + chunk }
      // A chunk added since open has no start: its group's first sorted page stands for it.
      let start = chunk < sorted.starts.count ? sorted.starts[chunk] : 0
      return sorted.base.pageNumber(sorted.base.locate(rank: start).page)
    }

    /// Loads chunk `chunk` of `storage` unless it is loaded.
    ///
    /// - Returns: whether it is loaded and checked; `false` when it failed (now or before),
    ///   which the pages' `damage` reports.
    func load(_ chunk: Int, into storage: Storage) -> Bool {
      lock.lock()
      defer { lock.unlock() }
      return loadLocked(chunk, into: storage)
    }

    /// Loads every chunk not yet loaded.
    func loadAll(into storage: Storage) -> Bool {
      lock.lock()
      defer { lock.unlock() }
      for chunk in 0..<chunkCount where !loadLocked(chunk, into: storage) { return false }
      return true
    }

    /// An arena of the same chunks, holding the loaded ones' bytes, the rest to be loaded
    /// from the same file, and copies of the chunks added since open. Under `lock`, so that
    /// no chunk is half loaded while it is copied.
    func copy(of storage: Storage) -> Storage {
      lock.lock()
      defer { lock.unlock() }
      let reserved = Array(storage.lengths.prefix(storage.reservedChunks))
      let copy = Storage(reserving: reserved, used: storage.used, lazy: LazyChunks(copying: self))
      for chunk in 0..<chunkCount where states[chunk] == 1 {
        copy.chunks[chunk].copyMemory(from: storage.chunks[chunk], byteCount: storage.lengths[chunk])
      }
      copy.append(copiesOf: storage, from: storage.reservedChunks)
      return copy
    }

    private func loadLocked(_ chunk: Int, into storage: Storage) -> Bool {
      switch states[chunk] {
      case 1: return true
      case 2: return false
      default: break
      }
      let length = storage.lengths[chunk]
      if let sorted = source.sorted {
        let rebuilt = Result {
          try CheckpointTableImage.rebuildChunk(
            from: sorted.base, group: sorted.name, start: sorted.starts[chunk], into: storage.chunks[chunk],
            length: length)
        }
        // A sorted page that failed was reported by the base as it failed.
        guard case .success(let filled) = rebuilt, filled else {
          states[chunk] = 2
          if case .success = rebuilt {
            source.pages.fail(
              page: page(of: chunk),
              Checkpoint.Rejection(reason: "chunk \(chunk) of table \(source.table) does not match its sorted pages"))
          }
          return false
        }
        return markLoaded(chunk)
      }
      do throws(Checkpoint.Rejection) {
        let contents = try source.pages.contents(
          of: page(of: chunk), kind: CaskFormat.checkpointPageChunk, table: source.table, count: length)
        let decoded = contents.withUnsafeBytes {
          CheckpointTableImage.decodeChunk($0, into: storage.chunks[chunk], length: length)
        }
        guard decoded else { throw Checkpoint.Rejection(reason: "page \(page(of: chunk)) is malformed") }
      } catch {
        states[chunk] = 2
        source.pages.fail(page: page(of: chunk), error)
        return false
      }
      return markLoaded(chunk)
    }

    private func markLoaded(_ chunk: Int) -> Bool {
      states[chunk] = 1
      missing -= 1
      if missing == 0 { complete.store(true, ordering: .releasing) }
      return true
    }
  }

  /// An arena of the chunks a checkpoint lists for a table (their `lengths`, `used` bytes of
  /// the last), read from `source` when first needed.
  init(reserving lengths: [Int], used: Int, live: Int, dead: Int, source: ChunkSource) {
    storage = Storage(reserving: lengths, used: used, lazy: LazyChunks(source: source, chunkCount: lengths.count))
    liveBytes = live
    deadBytes = dead
  }

  /// Loads chunk `chunk` unless it is loaded (or the arena is not lazy, or the chunk was
  /// added since open).
  ///
  /// - Returns: `false` when it failed: nothing of it may be read or written.
  @inline(__always)
  func ensureLoaded(chunk: Int) -> Bool {
    guard let lazy = storage.lazy, chunk < storage.reservedChunks, !lazy.complete.load(ordering: .acquiring) else {
      return true
    }
    return lazy.load(chunk, into: storage)
  }

  /// Whether chunk `chunk` may be read and written now, without a load: it was loaded, added
  /// since open, or the arena is not lazy.
  func isLoaded(chunk: Int) -> Bool {
    guard let lazy = storage.lazy, chunk < storage.reservedChunks, !lazy.complete.load(ordering: .acquiring) else {
      return true
    }
    return lazy.isLoaded(chunk)
  }

  /// Loads every chunk not yet loaded: before packing, a check of every key or a checkpoint.
  ///
  /// - Returns: `false` when a chunk failed.
  func loadAllChunks() -> Bool {
    guard let lazy = storage.lazy, !lazy.complete.load(ordering: .acquiring) else { return true }
    return lazy.loadAll(into: storage)
  }
}

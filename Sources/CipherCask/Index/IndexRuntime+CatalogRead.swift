import CaskEngine
import Foundation

/// A collection's catalogue read off the caller's thread from the moment it is declared.
/// Prevents: the first save or query after open reading and decoding the catalogue itself
/// (a lookup, a decryption, and the JSON decoder's first use in the process: about a fifth of
/// the first save's time on a small store), when the app declared its collections at launch
/// and wrote later.
///
/// Nothing read ahead is trusted blindly: a read is used only if no commit changed a catalogue
/// since it was begun (`State.catalogGeneration`, counted by the change observer, which runs
/// under the writer lock as every commit that writes a catalogue does), otherwise the
/// catalogue is read again.
///
/// Locking: a `CatalogRead`'s lock is taken under `IndexRuntime.state` (by `catalog`) or with no
/// lock held (by the background read); inside it only the store's own locks (its `get`).
extension IndexRuntime {
  /// One catalogue read begun at declaration. Whoever comes first, the background job or the
  /// first use, reads it under `lock`, and the other finds it done. Prevents: the first use
  /// waiting for a background thread to be scheduled, or reading the catalogue a second time
  /// while the job is halfway through.
  final class CatalogRead: Sendable {
    /// Whether the read was done, and what it gave (`nil`: it failed).
    private let result = Locked<(done: Bool, catalog: IndexCatalog?)>((false, nil))
    /// The runtime's `catalogGeneration` when the read was begun.
    let generation: UInt64

    init(generation: UInt64) { self.generation = generation }

    /// Whether the catalogue has been read (or failed to be).
    var isDone: Bool { result.withLock { $0.done } }

    /// The catalogue, read now with `read` unless it was read before; `nil` when the read
    /// failed (the caller reads again, and reports the error).
    func take(_ read: () -> IndexCatalog?) -> IndexCatalog? {
      result.withLock { result in
        if !result.done { result = (true, read()) }
        return result.catalog
      }
    }
  }

  /// Begins reading the catalogue of `collection` on a background thread, unless it is read
  /// or being read.
  func prefetchCatalog(of collection: String) {
    let key = ByteString(collection)
    let begun = state.withLock { state -> CatalogRead? in
      guard !state.closed, state.catalogs[key] == nil, state.catalogReads[key] == nil else { return nil }
      let read = CatalogRead(generation: state.catalogGeneration)
      state.catalogReads[key] = read
      return read
    }
    guard let begun else { return }
    DispatchQueue.global(qos: .utility).async {
      _ = begun.take { [weak self] in
        guard let store = try? self?.store else { return nil }
        return try? Self.readCatalog(of: collection, from: store)
      }
    }
  }

  /// The catalogue of `collection` a read begun at declaration holds, if no commit changed a
  /// catalogue since it was begun; taken out of `state` either way.
  func prefetchedCatalog(of collection: String, in state: inout State) -> IndexCatalog? {
    guard let read = state.catalogReads.removeValue(forKey: ByteString(collection)),
      read.generation == state.catalogGeneration, let store = try? self.store
    else { return nil }
    return read.take { try? Self.readCatalog(of: collection, from: store) }
  }

  /// The catalogue of `collection` as `store` holds it (empty when it holds none).
  static func readCatalog(of collection: String, from store: CaskStore) throws -> IndexCatalog {
    try store.get(IndexStoreKeys.catalogKey(collection: collection)).flatMap(IndexCatalog.decoded) ?? IndexCatalog()
  }
}

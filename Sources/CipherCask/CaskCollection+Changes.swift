import Foundation

/// What one commit changed in a collection.
public struct CollectionChange<ID: Sendable>: Sendable {
  /// Ids of objects that did not exist before.
  public var inserted: [ID] = []
  /// Ids of objects that were replaced.
  public var updated: [ID] = []
  /// Ids of objects that were removed.
  public var deleted: [ID] = []

  public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

extension CollectionChange: Equatable where ID: Equatable {}

extension CaskCollection {
  /// A stream of the changes committed to this collection from now on (through any
  /// collection value or batch on the same store), one element per commit, in commit order.
  ///
  /// The stream buffers without bound. It finishes when the store is closed, after the
  /// changes of every commit made before the close (a stream asked for on a closed store is
  /// finished from the start); it also ends when the consumer's task is cancelled or the
  /// stream is released.
  public func changes() -> AsyncStream<CollectionChange<T.ID>> {
    let (stream, continuation) = AsyncStream.makeStream(of: CollectionChange<T.ID>.self)
    // An invalid name (empty, or with U+0000) has no objects: its prefix would match keys of
    // another collection.
    guard (try? checkName()) != nil else {
      continuation.finish()
      return stream
    }
    let prefix = name + Self.separator
    let observation = store.observeChanges { changes in
      var change = CollectionChange<T.ID>()
      for item in changes where item.key.utf8.starts(with: prefix.utf8) {
        guard let id = Self.parseID(Self.idString(fromKey: item.key)) else { continue }
        switch item.kind {
        case .inserted: change.inserted.append(id)
        case .updated: change.updated.append(id)
        case .deleted: change.deleted.append(id)
        }
      }
      if !change.isEmpty { continuation.yield(change) }
    } onClose: {
      continuation.finish()
    }
    continuation.onTermination = { _ in observation.cancel() }
    return stream
  }
}

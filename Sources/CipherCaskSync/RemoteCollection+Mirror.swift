import CipherCask
import Foundation

extension RemoteCollection {
  /// What `pullAll(deletingMissing:)` did.
  public struct MirrorResult: Sendable, Equatable {
    /// Objects the listing held that were new locally, or replaced a local copy.
    public var inserted: Int
    public var replaced: Int
    /// Local objects the listing no longer held, deleted.
    public var deleted: Int
  }

  /// `pullAll()`, and, when `deletingMissing` is set, deletes in the same atomic batch every
  /// local object that the complete listing did not return: the server deleted it. Objects
  /// with changes queued in the outbox stay (their changes have yet to reach the server).
  ///
  /// Only a complete listing deletes: a call that fails on any page writes nothing.
  ///
  /// - Returns: how many objects were inserted, replaced and deleted.
  /// - Throws: as `pullAll()`.
  /// - Complexity: that of `pullAll()`, plus listing the collection's keys once.
  public func pullAll(
    deletingMissing: Bool, adjust: RequestHook? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil
  ) async throws -> MirrorResult {
    try await serializer.run {
      let (imported, deleted) = try await pullPages(
        deletingMissing: deletingMissing, adjust: adjust, progress: progress)
      return MirrorResult(inserted: imported.inserted, replaced: imported.replaced, deleted: deleted)
    }
  }

  /// Deletes the objects of the collection whose ids (as UTF-8 bytes) are not in `received`,
  /// except those with changes queued, and what the client knew of them.
  ///
  /// - Returns: how many were deleted.
  func removeMissing(keeping received: Set<[UInt8]>, queue: Bool, in transaction: inout CaskTransaction) throws -> Int {
    var deleted = 0
    for key in try transaction.keys(inGroup: local.name) {
      let idText = Self.idText(ofKey: key)
      guard !received.contains(Array(idText.utf8)) else { continue }
      if queue, try outbox.queuedCount(of: idText, in: transaction) > 0 { continue }
      try transaction.delete(key)
      if let id = T.ID(idText) { try metadata.forget(id, in: &transaction) }
      deleted += 1
    }
    return deleted
  }

  /// The id part of a key of the collection.
  private static func idText(ofKey key: String) -> String {
    guard let separator = key.utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else { return key }
    return String(key[key.utf8.index(after: separator)...])
  }
}

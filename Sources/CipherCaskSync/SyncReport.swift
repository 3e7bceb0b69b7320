import Foundation

/// Who wins when an object changed both locally and on the server since the last sync.
public enum SyncConflictPolicy: String, Sendable, Equatable, CaseIterable {
  /// The server's version replaces the local change (a server deletion deletes locally).
  case serverWins
  /// The local change is sent over the server's version (a local deletion deletes it there).
  case clientWins
  /// Both versions are kept: the local one stays local and unsent, the server's is kept
  /// beside it, until the app calls `CaskSync.resolve(_:with:)` (or a later sync with another
  /// policy decides).
  case manual
}

/// An object that changed both locally and on the server: both versions, `nil` for a deletion.
public struct SyncConflict<T: Sendable>: Sendable {
  /// The object's local id, as text.
  public var id: String
  /// The local version (`nil`: deleted locally).
  public var local: T?
  /// The server's version (`nil`: deleted on the server).
  public var server: T?
}

/// What one `sync` did.
public struct SyncReport<T: Sendable>: Sendable {
  /// Objects the server sent that were stored locally (created or replaced).
  public var pulled = 0
  /// Local objects deleted because the server deleted them (or, on a full resync, no longer has them).
  public var deleted = 0
  /// Local changes the server confirmed (saves and deletions).
  public var pushed = 0
  /// Conflicts met in this sync, both versions each; under `.manual` they stay for the app.
  public var conflicts: [SyncConflict<T>] = []
  /// Whether the pull listed the whole collection (first sync, or a cursor the server could
  /// no longer serve) instead of the changes since the last sync.
  public var fullResync = false
  /// HTTP requests sent, retries included.
  public var requests = 0
  /// Request and response body bytes.
  public var bytes: Int64 = 0
}

/// What a sync is doing, for a screen to show (`CaskSync.events`).
public enum SyncEvent: Sendable, Equatable {
  /// A sync began.
  case started
  /// A page of the server's changes was stored: `records` in it, `total` so far.
  case pulledPage(records: Int, total: Int)
  /// The whole collection is listed again (the server could not serve the changes since the
  /// last sync).
  case fullResync
  /// A batch of local changes was confirmed: `changes` in it, `total` so far.
  case pushedBatch(changes: Int, total: Int)
  /// The server reported `changes` of a batch done that it does not hold (another item of the
  /// batch failed and rolled them back): they stay marked and are sent again.
  case unconfirmed(changes: Int)
  /// A request failed and is tried again after `delay` seconds (`attempt` counts from 1).
  case retrying(attempt: Int, delay: TimeInterval, reason: String)
  /// An object changed on both sides (its local id).
  case conflict(id: String)
  /// The sync ended: what it moved.
  case finished(pulled: Int, deleted: Int, pushed: Int, conflicts: Int)
  /// The sync failed with this message.
  case failed(String)
}

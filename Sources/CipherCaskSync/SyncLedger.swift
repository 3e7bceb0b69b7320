import CipherCask
import Foundation

/// What a synced collection keeps in its store beside its objects, all written in the same
/// atomic commits as the objects they describe (Docs/SYNC.md, "What is stored locally"):
///
/// - `__tracked\0<collection>`: the sync state (`State`: which remote, the pull cursor). Its
///   existence makes the engine mark every change of the collection (`CaskFormat.trackedGroupsGroup`).
/// - `__changes:<collection>\0<id>`: a change mark per object changed since it was last sent,
///   written by the engine in the commit that changed it; its value is a token.
/// - `__kinto:<collection>\0<record id>`: what the server had of an object when it was last
///   synced (`Meta`: its local id and `last_modified`).
/// - `__conflicts:<collection>\0<id>`: the server's version of an object in conflict, kept
///   under `.manual` until the app decides.
struct SyncLedger: Sendable {
  let collection: String
  private static let separator = CaskFormat.keyGroupSeparatorText

  var stateKey: String { CaskFormat.trackedGroupsGroup + Self.separator + collection }
  var markGroup: String { CaskFormat.changeMarkPrefix + collection }
  var metaGroup: String { "__kinto:" + collection }
  var conflictGroup: String { "__conflicts:" + collection }

  func markKey(_ id: String) -> String { markGroup + Self.separator + id }
  func metaKey(_ recordID: String) -> String { metaGroup + Self.separator + recordID }
  func conflictKey(_ id: String) -> String { conflictGroup + Self.separator + id }

  /// The part of `key` after its group's separator.
  static func rest(of key: String) -> String {
    guard let separator = key.utf8.firstIndex(of: CaskFormat.keyGroupSeparator) else { return key }
    return String(key[key.utf8.index(after: separator)...])
  }

  /// The sync state of a collection.
  struct State: Codable, Sendable, Equatable {
    /// Which server, bucket, collection and mode; another one starts over.
    var remote: String
    /// The server's timestamp (collection ETag) up to which its changes are stored locally;
    /// `nil` before the first complete pull.
    var cursor: Int64?
    /// The server's timestamp up to which no record can still commit unseen (at most
    /// `cursor`): a record dated after it may belong to a transaction that was open at the last
    /// listing, so the next listing starts here. `nil` in a state written without it: then
    /// the cursor.
    var settled: Int64?
    /// Whether the bucket and collection are known to exist (with key parameters in
    /// end-to-end mode).
    var prepared = false
    /// End-to-end mode's key parameters, as the collection's metadata on the server holds them.
    var keyParameters: KeyParameters?

    /// Where the next listing of changes starts: the settled timestamp, never after the cursor.
    var listingStart: Int64? {
      guard let cursor else { return nil }
      return min(settled ?? cursor, cursor)
    }
  }

  /// What the server had of an object when it was last synced.
  struct Meta: Codable, Sendable, Equatable {
    /// The local id.
    var id: String
    /// The record's `last_modified`.
    var modified: Int64
  }

  /// The server's side of a conflict kept for the app.
  struct StoredConflict: Codable, Sendable {
    var recordID: String
    /// The server's object as JSON; `nil` when the server deleted it.
    var server: Data?
    var modified: Int64?
  }

  // MARK: Reading and writing

  static func decode<V: Decodable>(_ type: V.Type, _ data: Data?) throws -> V? {
    guard let data else { return nil }
    do {
      return try JSONDecoder().decode(type, from: data)
    } catch {
      throw SyncError.decoding("the collection's sync state in the store is damaged")
    }
  }

  func state(in store: CaskStore) throws -> State? {
    try Self.decode(State.self, store.get(stateKey))
  }

  func state(in transaction: CaskTransaction) throws -> State? {
    try Self.decode(State.self, transaction.get(stateKey))
  }

  /// Writes the state; a commit that writes it is the sync's own, so the engine adds no
  /// change marks to it (ChangeTracker.swift).
  func write(_ state: State, in transaction: inout CaskTransaction) throws {
    try transaction.put(JSONEncoder().encode(state), forKey: stateKey)
  }

  /// Rewrites the state as it is, so that the commit counts as the sync's own and the engine
  /// marks none of the object writes in it (they come from the server, not from the app).
  func claim(in transaction: inout CaskTransaction) throws {
    if let data = try transaction.get(stateKey) { try transaction.put(data, forKey: stateKey) }
  }

  func meta(_ recordID: String, in transaction: CaskTransaction) throws -> Meta? {
    try Self.decode(Meta.self, transaction.get(metaKey(recordID)))
  }

  func meta(_ recordID: String, in store: CaskStore) throws -> Meta? {
    try Self.decode(Meta.self, store.get(metaKey(recordID)))
  }

  func setMeta(_ meta: Meta?, recordID: String, in transaction: inout CaskTransaction) throws {
    let key = metaKey(recordID)
    if let meta {
      try transaction.put(JSONEncoder().encode(meta), forKey: key)
    } else if try transaction.contains(key) {
      try transaction.delete(key)
    }
  }

  /// Removes the change mark of `id` if it still holds `token` (no change came after the one
  /// that was sent), or whatever it holds when `token` is nil.
  func clearMark(_ id: String, token: Data?, in transaction: inout CaskTransaction) throws {
    guard let current = try transaction.get(markKey(id)) else { return }
    if token == nil || current == token { try transaction.delete(markKey(id)) }
  }

  /// Marks `id` as changed (for a change the sync makes on the app's behalf, such as a
  /// resolution that keeps the local version).
  func setMark(_ id: String, in transaction: inout CaskTransaction) throws {
    try transaction.put(Data("resolved".utf8), forKey: markKey(id))
  }

  func isMarked(_ id: String, in transaction: CaskTransaction) throws -> Bool {
    try transaction.contains(markKey(id))
  }

  func conflict(_ id: String, in transaction: CaskTransaction) throws -> StoredConflict? {
    try Self.decode(StoredConflict.self, transaction.get(conflictKey(id)))
  }

  func setConflict(_ conflict: StoredConflict?, id: String, in transaction: inout CaskTransaction) throws {
    let key = conflictKey(id)
    if let conflict {
      try transaction.put(JSONEncoder().encode(conflict), forKey: key)
    } else if try transaction.contains(key) {
      try transaction.delete(key)
    }
  }

  /// The marked ids with their tokens, without those in conflict.
  func pendingMarks(in store: CaskStore) throws -> [(id: String, token: Data)] {
    let conflicted = Set(try store.keys(inGroup: conflictGroup).map(Self.rest(of:)))
    return try store.keys(inGroup: markGroup).compactMap { key in
      let id = Self.rest(of: key)
      guard !conflicted.contains(id), let token = try store.get(key) else { return nil }
      return (id, token)
    }
  }
}

import CipherCask
import Foundation

/// What the app decides for an object kept in conflict under `.manual`.
public enum SyncResolution<T: Sendable>: Sendable {
  /// Keep the local version; the next sync sends it over the server's.
  case keepLocal
  /// Take the server's version (or its deletion).
  case keepServer
  /// Store this object (a merge of both) and send it.
  case use(T)
}

/// A version of a record as the server holds it.
struct ServerVersion<T: Sendable>: Sendable {
  var recordID: String
  var modified: Int64
  /// The local id; `nil` for a tombstone (its id is then known only from what was synced).
  var localID: String?
  /// `nil` when the server deleted it.
  var object: T?
}

/// What applying server versions did, for the report.
struct ApplyTally<T: Sendable>: Sendable {
  var pulled = 0
  var deleted = 0
  var conflicts: [SyncConflict<T>] = []
}

extension CaskSync {
  /// The server version a record (or tombstone) of a listing or of `details.existing` is.
  func version(of record: [String: Any]) throws -> ServerVersion<T> {
    guard let recordID = record["id"] as? String,
      let modified = (record["last_modified"] as? NSNumber)?.int64Value
    else { throw SyncError.decoding("a record has no id or last_modified") }
    if record["deleted"] as? Bool == true {
      return ServerVersion(recordID: recordID, modified: modified, localID: nil, object: nil)
    }
    let (id, object) = try codec.decode(record)
    return ServerVersion(recordID: recordID, modified: modified, localID: id, object: object)
  }

  /// Stores a server version in `transaction`: as it is when the object has no local change;
  /// by `policy` when it has one (a conflict), unless both sides hold the same object.
  func apply(
    _ version: ServerVersion<T>, policy: SyncConflictPolicy, in transaction: inout CaskTransaction,
    tally: inout ApplyTally<T>
  ) throws {
    let meta = try ledger.meta(version.recordID, in: transaction)
    if let meta, meta.modified == version.modified { return }  // already stored (our own push)
    guard let localID = version.localID ?? meta?.id else { return }  // a deletion of what we never had
    guard let id = T.ID(localID) else { throw SyncError.decoding("a record's local id does not parse") }
    let key = try local.storageKey(for: id)
    let localObject = try transaction.get(key).map { try local.coder.decode(T.self, from: $0) }
    let newMeta = version.object == nil ? nil : SyncLedger.Meta(id: localID, modified: version.modified)
    let planted = cache.withLock { $0.plantedLostUpdate }
    guard try ledger.isMarked(localID, in: transaction), !planted else {
      try store(version.object, key: key, existed: localObject != nil, in: &transaction, tally: &tally)
      try ledger.setMeta(newMeta, recordID: version.recordID, in: &transaction)
      return
    }
    if RecordCodec<T>.canonical(localObject) == RecordCodec<T>.canonical(version.object) {
      try ledger.clearMark(localID, token: nil, in: &transaction)
      try ledger.setMeta(newMeta, recordID: version.recordID, in: &transaction)
      try ledger.setConflict(nil, id: localID, in: &transaction)
      return
    }
    tally.conflicts.append(SyncConflict(id: localID, local: localObject, server: version.object))
    // Either way the local copy is now based on the server's version: a push goes against it.
    try ledger.setMeta(newMeta, recordID: version.recordID, in: &transaction)
    switch policy {
    case .serverWins:
      try store(version.object, key: key, existed: localObject != nil, in: &transaction, tally: &tally)
      try ledger.clearMark(localID, token: nil, in: &transaction)
      try ledger.setConflict(nil, id: localID, in: &transaction)
    case .clientWins:
      try ledger.setConflict(nil, id: localID, in: &transaction)
    case .manual:
      let kept = SyncLedger.StoredConflict(
        recordID: version.recordID, server: RecordCodec<T>.canonical(version.object), modified: version.modified)
      try ledger.setConflict(kept, id: localID, in: &transaction)
    }
  }

  private func store(
    _ object: T?, key: String, existed: Bool, in transaction: inout CaskTransaction, tally: inout ApplyTally<T>
  ) throws {
    if let object {
      try transaction.put(local.coder.encode(object), forKey: key)
      tally.pulled += 1
    } else if existed {
      try transaction.delete(key)
      tally.deleted += 1
    }
  }

  // MARK: Conflicts kept for the app

  /// The conflicts kept under `.manual`, both versions each.
  public func conflicts() async throws -> [SyncConflict<T>] {
    let store = local.store
    let ledger = self.ledger
    let local = self.local
    return try await Self.offPool {
      try store.keys(inGroup: ledger.conflictGroup).map { key in
        let id = SyncLedger.rest(of: key)
        let kept = try SyncLedger.decode(SyncLedger.StoredConflict.self, store.get(key))
        let mine = try T.ID(id).flatMap { try local.get(id: $0) }
        let theirs = try kept?.server.map { try JSONDecoder().decode(T.self, from: $0) }
        return SyncConflict(id: id, local: mine, server: theirs)
      }
    }
  }

  /// Settles a conflict kept under `.manual`.
  ///
  /// - Returns: whether `id` was in conflict.
  @discardableResult
  public func resolve(_ id: T.ID, with resolution: SyncResolution<T>) async throws -> Bool {
    let policy: SyncConflictPolicy
    var chosen: T?
    switch resolution {
    case .keepLocal: policy = .clientWins
    case .keepServer: policy = .serverWins
    case .use(let object):
      policy = .clientWins
      chosen = object
    }
    let choice = chosen
    return try await serializer.run {
      try await Self.offPool { [self] in
        try local.store.transaction { transaction in
          var tally = ApplyTally<T>()
          guard try settle(id.description, policy: policy, in: &transaction, tally: &tally) else { return false }
          if let choice {
            try transaction.put(local.coder.encode(choice), forKey: local.storageKey(for: id))
            try ledger.setMark(id.description, in: &transaction)
          }
          return true
        }
      }
    }
  }

  /// Settles every kept conflict by `policy` (a sync with `.serverWins` or `.clientWins`).
  func settleStoredConflicts(_ policy: SyncConflictPolicy, report: inout SyncReport<T>) async throws {
    let tally = try await Self.offPool { [self] in
      try local.store.transaction { transaction in
        var tally = ApplyTally<T>()
        for key in try transaction.keys(inGroup: ledger.conflictGroup) {
          _ = try settle(SyncLedger.rest(of: key), policy: policy, in: &transaction, tally: &tally)
        }
        return tally
      }
    }
    report.pulled += tally.pulled
    report.deleted += tally.deleted
  }

  /// Settles the kept conflict of `id`: `.serverWins` stores the server's version and drops the
  /// local change; otherwise the local change stays marked, to be sent.
  private func settle(
    _ id: String, policy: SyncConflictPolicy, in transaction: inout CaskTransaction, tally: inout ApplyTally<T>
  ) throws -> Bool {
    guard let kept = try ledger.conflict(id, in: transaction), let typed = T.ID(id) else { return false }
    try ledger.setConflict(nil, id: id, in: &transaction)
    try ledger.claim(in: &transaction)
    if policy == .serverWins {
      let key = try local.storageKey(for: typed)
      let server = try kept.server.map { try JSONDecoder().decode(T.self, from: $0) }
      try store(server, key: key, existed: try transaction.contains(key), in: &transaction, tally: &tally)
      try ledger.clearMark(id, token: nil, in: &transaction)
    } else {
      try ledger.setMark(id, in: &transaction)
    }
    return true
  }
}

import CipherCask
import Foundation

/// A change waiting to be sent, stored encrypted in the key group `__outbox:<collection>`
/// under a zero-padded sequence number, so the queue is read back in order.
struct OutboxEntry: Codable, Sendable {
  enum Operation: String, Codable, Sendable {
    case save
    case delete
  }

  /// Sent as `Idempotency-Key`, so a server that remembers it applies a resent change once.
  var change: String
  var operation: Operation
  var id: String
  /// The JSON body for a save.
  var body: Data?
}

extension RemoteCollection {
  var outboxGroup: String { "__outbox:" + local.name }

  /// Changes queued and not yet accepted by the server.
  ///
  /// - Complexity: O(1).
  public var pendingCount: Int {
    local.store.count(inGroup: outboxGroup)
  }

  /// Saves `object` locally at once and queues it for the server, in one atomic batch: after
  /// a crash both are there or neither.
  public func saveAndQueue(_ object: T) async throws {
    let body = try jsonBody(for: object)
    try await store {
      try local.store.transaction { transaction in
        try transaction.put(local.coder.encode(object), forKey: local.storageKey(for: object.id))
        try enqueue(.save, id: object.id, body: body, in: &transaction)
      }
    }
  }

  /// Deletes the object locally at once and queues the delete for the server, atomically.
  ///
  /// - Returns: whether a local object existed.
  @discardableResult
  public func deleteAndQueue(id: T.ID) async throws -> Bool {
    try await store {
      try local.store.transaction { transaction in
        let key = try local.storageKey(for: id)
        let existed = try transaction.contains(key)
        if existed { try transaction.delete(key) }
        try enqueue(.delete, id: id, body: nil, in: &transaction)
        return existed
      }
    }
  }

  /// Sends the queued changes in order. Each is removed from the queue only after the server
  /// accepted it (and the server's answer is stored in the same batch), so a process killed
  /// in the middle resends from the first unaccepted change; the `Idempotency-Key` header
  /// lets the server apply a resent change once.
  ///
  /// - Returns: how many changes were sent.
  /// - Throws: `SyncError.conflict` (the change stays queued, later ones wait), and the other
  ///   `SyncError`s; changes sent before the error stay sent.
  @discardableResult
  public func pushPending(
    adjust: RequestHook? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil
  ) async throws -> Int {
    var sent = 0
    var moved = SyncProgress()
    while true {
      try Self.checkCancelled()
      guard let (key, entry) = try await store({ try firstQueued() }) else { return sent }
      guard let id = T.ID(entry.id) else {
        throw SyncError.decoding("a queued change names an id that does not parse")
      }
      switch entry.operation {
      case .save:
        let body = entry.body ?? Data()
        let response = try await sendChange(id: id, body: body, changeID: entry.change, adjust: adjust)
        let answered = response.body.isEmpty ? nil : try answer(response, sent: decodeSent(body))
        try await store {
          try local.store.transaction { transaction in
            try transaction.delete(key)
            // A later queued change to the same object keeps the local version.
            if let answered, try !hasQueuedChange(for: id, in: transaction) {
              try transaction.put(local.coder.encode(answered), forKey: local.storageKey(for: id))
            }
            try metadata.record(etag: response.header("ETag"), for: id, in: &transaction)
          }
        }
        moved.bytes += Int64(body.count + response.body.count)
      case .delete:
        let response = try await sendDelete(id: id, changeID: entry.change, adjust: adjust)
        try await store {
          try local.store.transaction { transaction in
            try transaction.delete(key)
            try metadata.forget(id, in: &transaction)
          }
        }
        moved.bytes += Int64(response?.body.count ?? 0)
      }
      sent += 1
      moved.objects = sent
      progress?(moved)
    }
  }

  /// A queued change, as `pendingChanges()` lists it.
  public struct PendingChange: Sendable, Equatable {
    /// The change's id, sent as `Idempotency-Key`.
    public var change: String
    /// Whether it saves or deletes.
    public var isDelete: Bool
    /// The object's id.
    public var id: String
  }

  /// The queued changes, oldest first.
  ///
  /// - Complexity: O(m) reads for the m queued changes.
  public func pendingChanges() async throws -> [PendingChange] {
    try await store {
      try local.store.keys(inGroup: outboxGroup).compactMap { key in
        guard let data = try local.store.get(key), let entry = try? JSONDecoder().decode(OutboxEntry.self, from: data)
        else { return nil }
        return PendingChange(change: entry.change, isDelete: entry.operation == .delete, id: entry.id)
      }
    }
  }

  /// Drops a queued change that the server will never accept (for example a save refused
  /// for good), so the changes after it can be sent. The local collection is not changed.
  ///
  /// - Returns: whether the change was queued.
  @discardableResult
  public func discardPending(change: String) async throws -> Bool {
    try await store {
      try local.store.transaction { transaction in
        for key in try transaction.keys(inGroup: outboxGroup) {
          guard let data = try transaction.get(key),
            let entry = try? JSONDecoder().decode(OutboxEntry.self, from: data), entry.change == change
          else { continue }
          try transaction.delete(key)
          return true
        }
        return false
      }
    }
  }

  // MARK: Queue storage

  private func enqueue(
    _ operation: OutboxEntry.Operation, id: T.ID, body: Data?, in transaction: inout CaskTransaction
  ) throws {
    let keys = try transaction.keys(inGroup: outboxGroup)
    let last = keys.last.flatMap { UInt64($0.split(separator: "\u{0}").last ?? "") } ?? 0
    let entry = OutboxEntry(change: UUID().uuidString, operation: operation, id: id.description, body: body)
    try transaction.put(JSONEncoder().encode(entry), forKey: outboxKey(last + 1))
  }

  private func outboxKey(_ sequence: UInt64) -> String {
    let digits = String(sequence)
    return outboxGroup + "\u{0}" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits
  }

  private func firstQueued() throws -> (String, OutboxEntry)? {
    guard let key = try local.store.keys(inGroup: outboxGroup).first, let data = try local.store.get(key) else {
      return nil
    }
    do {
      return (key, try JSONDecoder().decode(OutboxEntry.self, from: data))
    } catch {
      throw SyncError.decoding("a queued change does not decode")
    }
  }

  private func hasQueuedChange(for id: T.ID, in transaction: CaskTransaction) throws -> Bool {
    for key in try transaction.keys(inGroup: outboxGroup) {
      guard let data = try transaction.get(key), let entry = try? JSONDecoder().decode(OutboxEntry.self, from: data)
      else { continue }
      if entry.id == id.description { return true }
    }
    return false
  }

  private func decodeSent(_ body: Data) throws -> T {
    do {
      return try configuration.makeDecoder().decode(T.self, from: body)
    } catch {
      throw SyncError.decoding("a queued object does not decode")
    }
  }
}

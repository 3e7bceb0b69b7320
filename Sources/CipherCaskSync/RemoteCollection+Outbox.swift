import CipherCask
import Foundation

/// A change waiting to be sent, stored encrypted in the key group `__outbox:<collection>`
/// under a zero-padded sequence number, so the queue is read back in order (OutboxIndex.swift).
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
  var outbox: OutboxIndex { OutboxIndex(collection: local.name) }
  var outboxGroup: String { outbox.queueGroup }

  /// Changes queued and not yet accepted by the server.
  ///
  /// - Complexity: O(1).
  public var pendingCount: Int {
    local.store.count(inGroup: outboxGroup)
  }

  /// Saves `object` locally at once and queues it for the server, in one atomic batch: after
  /// a crash both are there or neither.
  ///
  /// - Complexity: O(1) in the number of changes already queued: one encode, a few reads and
  ///   writes, one batch.
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
  /// - Complexity: O(1) in the number of changes already queued.
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
  /// The whole run takes one turn (`SyncSerializer`): a second run, or a pull, waits for it.
  /// When the last queued change to an object is accepted, the local copy becomes what the
  /// server accepted (the answer, the body sent when the answer has none, no object after a
  /// delete), whatever a pull stored meanwhile.
  ///
  /// - Returns: how many changes were sent.
  /// - Throws: `SyncError.conflict` (the change stays queued, later ones wait), and the other
  ///   `SyncError`s; changes sent before the error stay sent.
  /// - Complexity: for m queued changes, m requests and O(m) reads, decodes and writes, plus
  ///   listing the queue's keys in memory (O(m log m), no decryption) once at the start and
  ///   once more at the end for changes queued meanwhile.
  @discardableResult
  public func pushPending(
    adjust: RequestHook? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil
  ) async throws -> Int {
    try await serializer.run { try await sendQueue(adjust: adjust, progress: progress) }
  }

  /// `pushPending`'s work, in its turn.
  private func sendQueue(
    adjust: RequestHook?, progress: (@Sendable (SyncProgress) -> Void)?
  ) async throws -> Int {
    let outbox = self.outbox
    var sent = 0
    var moved = SyncProgress()
    // The queue is listed once, and again only when that list is used up, for changes
    // queued meanwhile: each change costs O(1) reads and writes whatever the backlog.
    var handled: UInt64 = 0
    while true {
      let after = handled
      let queued = try await store { try outbox.keys(after: after, in: local.store) }
      guard !queued.isEmpty else { return sent }
      for (sequence, key) in queued {
        try Self.checkCancelled()
        guard let entry = try await store({ try OutboxIndex.entry(key, in: local.store) }) else {
          handled = sequence  // discarded meanwhile
          continue
        }
        moved.bytes += try await send(entry, key: key, adjust: adjust)
        handled = sequence
        sent += 1
        moved.objects = sent
        progress?(moved)
      }
    }
  }

  /// Sends one queued change and, once the server accepted it, removes it from the queue in
  /// one transaction with what the answer tells.
  ///
  /// - Returns: the bytes sent and received.
  private func send(_ entry: OutboxEntry, key: String, adjust: RequestHook?) async throws -> Int64 {
    let outbox = self.outbox
    guard let id = T.ID(entry.id) else {
      throw SyncError.decoding("a queued change names an id that does not parse")
    }
    switch entry.operation {
    case .save:
      let body = entry.body ?? Data()
      let response = try await sendChange(id: id, body: body, changeID: entry.change, adjust: adjust)
      // An answer without a body means the server holds what was sent.
      let answered = try answer(response, sent: decodeSent(body))
      try await store {
        try local.store.transaction { transaction in
          let later = try outbox.remove(key, id: entry.id, in: &transaction)
          // A later queued change to the same object keeps the local version; the last one
          // makes the local copy what the server accepted (a pull may have replaced it).
          if later == 0 {
            try transaction.put(local.coder.encode(answered), forKey: local.storageKey(for: id))
          }
          try metadata.record(etag: response.header("ETag"), for: id, in: &transaction)
        }
      }
      return Int64(body.count + response.body.count)
    case .delete:
      let response = try await sendDelete(id: id, changeID: entry.change, adjust: adjust)
      try await store {
        try local.store.transaction { transaction in
          let later = try outbox.remove(key, id: entry.id, in: &transaction)
          // The last queued change removes a copy a pull brought back meanwhile.
          if later == 0 {
            let stored = try local.storageKey(for: id)
            if try transaction.contains(stored) { try transaction.delete(stored) }
          }
          try metadata.forget(id, in: &transaction)
        }
      }
      return Int64(response?.body.count ?? 0)
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
  ///
  /// - Complexity: O(m) reads for the m queued changes.
  public func discardPending(change: String) async throws -> Bool {
    let outbox = self.outbox
    return try await store {
      try local.store.transaction { transaction in
        for key in try transaction.keys(inGroup: outbox.queueGroup) {
          guard let data = try transaction.get(key),
            let entry = try? JSONDecoder().decode(OutboxEntry.self, from: data), entry.change == change
          else { continue }
          try outbox.remove(key, id: entry.id, in: &transaction)
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
    let entry = OutboxEntry(change: UUID().uuidString, operation: operation, id: id.description, body: body)
    try outbox.append(entry, in: &transaction)
  }

  private func decodeSent(_ body: Data) throws -> T {
    do {
      return try configuration.makeDecoder().decode(T.self, from: body)
    } catch {
      throw SyncError.decoding("a queued object does not decode")
    }
  }
}

import CipherCask
import Foundation
import RNCryptorCodec
import Synchronization

/// Offline-first sync of a `CaskCollection` with a collection on a Kinto server.
///
/// Making one marks the collection as synced in its store, for good: from then on every change
/// to it, through any API and in any process, is recorded in the commit that makes it (an
/// engine change mark), and the next `sync` sends it. The first sync uploads what the
/// collection already holds. `sync` pulls the server's changes since the last sync (its
/// `_since` cursor, stored in the same commit as each page), then pushes the marked objects
/// in batches of conditional requests. Docs/SYNC.md tells the algorithm step by step.
///
/// Calls take turns per store and collection (`SyncSerializer`), with `RemoteCollection`'s too.
public final class CaskSync<T: Codable & Identifiable & Sendable>: Sendable
where T.ID: LosslessStringConvertible & Sendable {
  /// The local collection.
  public let local: CaskCollection<T>
  /// The server.
  public let server: KintoServer
  /// The bucket and collection on the server.
  public let bucket: String
  public let remoteCollection: String
  let passphrase: String?
  let ledger: SyncLedger
  let client: KintoClient
  let serializer: SyncSerializer
  /// Set once per object: the keys of end-to-end mode and the server's batch limit.
  let cache = Mutex(Cache())
  let hub = EventHub()
  /// scrypt's cost for new end-to-end key parameters (tests lower it).
  let newKeyCost: RNCryptor.ScryptParameters

  struct Cache: Sendable {
    var keys: EndToEndKeys?
    var batchLimit: Int?
    /// A bug planted by the tests to show that the property test catches it: a pull that
    /// overwrites local changes as if they were not there (lost updates).
    var plantedLostUpdate = false
    /// A bug planted by the tests to show that the crash-state enumerator catches it: a pulled
    /// page's cursor stored in a commit of its own before the page's objects, so that a crash
    /// between the two leaves the cursor ahead of objects it claims to cover.
    var plantedCursorFirst = false
  }

  /// Connects `collection` to `bucket`/`collection` on `server` and marks it as synced in its
  /// store (at once, in one commit: the objects it already holds are marked for upload).
  ///
  /// - Parameters:
  ///   - endToEndPassphrase: when set, the server holds only keyed hashes of the ids and
  ///     RNCryptor v3 messages of the objects, under a key derived from it (Docs/SECURITY.md).
  /// - Throws: `CaskError` from the store; `SyncError.decoding` for a bucket or collection
  ///   name that Kinto does not accept.
  public convenience init(
    _ collection: CaskCollection<T>, server: KintoServer, bucket: String, collection remote: String,
    endToEndPassphrase: String? = nil
  ) throws {
    try self.init(
      collection, server: server, bucket: bucket, collection: remote, endToEndPassphrase: endToEndPassphrase,
      keyCost: .interactive)
  }

  init(
    _ collection: CaskCollection<T>, server: KintoServer, bucket: String, collection remote: String,
    endToEndPassphrase: String?, keyCost: RNCryptor.ScryptParameters
  ) throws {
    for name in [bucket, remote] where RecordCodec<T>.plainRecordID(for: name) != name {
      throw SyncError.decoding("Kinto bucket and collection names are letters, digits, '-' and '_'")
    }
    if let endToEndPassphrase, endToEndPassphrase.isEmpty {
      throw SyncError.decoding("the end-to-end passphrase is empty")
    }
    local = collection
    self.server = server
    self.bucket = bucket
    remoteCollection = remote
    passphrase = endToEndPassphrase
    newKeyCost = keyCost
    ledger = SyncLedger(collection: collection.name)
    serializer = SyncSerializer.shared(path: collection.store.resolvedPath, collection: collection.name)
    let hub = self.hub
    client = KintoClient(server: server) { attempt, delay, reason in
      hub.emit(.retrying(attempt: attempt, delay: delay, reason: reason))
    }
    try markSynced()
  }

  deinit {
    hub.finish()
  }

  /// Which server, bucket, collection and mode the stored state belongs to.
  var remoteIdentity: String {
    [server.url.absoluteString, bucket, remoteCollection, passphrase == nil ? "plain" : "end-to-end"]
      .joined(separator: "\n")
  }

  /// Writes the sync state on first use (or for another remote), marking every object the
  /// collection holds for upload, in one commit.
  private func markSynced() throws {
    let identity = remoteIdentity
    try local.store.transaction { transaction in
      if let state = try ledger.state(in: transaction), state.remote == identity { return }
      try ledger.write(SyncLedger.State(remote: identity), in: &transaction)
      for key in try transaction.keys(inGroup: ledger.metaGroup) { try transaction.delete(key) }
      for key in try transaction.keys(inGroup: ledger.conflictGroup) { try transaction.delete(key) }
      for key in try transaction.keys(inGroup: local.name) {
        try ledger.setMark(SyncLedger.rest(of: key), in: &transaction)
      }
    }
  }

  // MARK: Events

  /// What syncs of this object do, as they happen: each access is a new stream that ends when
  /// the object goes. Events come in order; a slow reader loses the oldest past 256.
  public var events: AsyncStream<SyncEvent> { hub.stream() }

  func emit(_ event: SyncEvent) { hub.emit(event) }

  // MARK: Sync

  /// Pulls the server's changes since the last sync, then pushes the local ones.
  ///
  /// - Parameter conflicts: who wins when an object changed on both sides; `.manual` keeps
  ///   both (see `conflicts()` and `resolve(_:with:)`), and a later sync with another policy
  ///   decides the ones kept.
  /// - Returns: what was moved, and the conflicts met.
  /// - Throws: `SyncError` (`.transport` once retries are spent, `.http` for a refusal,
  ///   `.wrongPassphrase`, `.cancelled`) and `CaskError`. Whatever was stored before the error
  ///   stays stored, with its cursor; unsent changes stay marked.
  /// - Complexity: one request when nothing changed on either side; else one per page of
  ///   changes, one per batch of pushes, and one to count the server's records.
  @discardableResult
  public func sync(conflicts policy: SyncConflictPolicy = .manual) async throws -> SyncReport<T> {
    try await serializer.run {
      emit(.started)
      let before = client.counters
      do {
        var report = SyncReport<T>()
        var state = try await prepare()
        if policy != .manual { try await settleStoredConflicts(policy, report: &report) }
        try await pull(policy, state: &state, report: &report)
        if let newest = try await push(policy, report: &report), server.datesInCommitOrder {
          try await passOwnPushes(through: newest, state: &state)
        }
        let after = client.counters
        report.requests = after.requests - before.requests
        report.bytes = after.bytes - before.bytes
        emit(
          .finished(
            pulled: report.pulled, deleted: report.deleted, pushed: report.pushed, conflicts: report.conflicts.count))
        return report
      } catch {
        emit(.failed(String(describing: error)))
        throw error
      }
    }
  }

  /// How many objects have changes not yet confirmed by the server (conflicts kept for the
  /// app included).
  public var pendingCount: Int {
    get async throws {
      let store = local.store
      let group = ledger.markGroup
      return try await Self.offPool { store.count(inGroup: group) }
    }
  }

  /// Runs store work off the cooperative pool (disk I/O, encryption).
  static func offPool<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global(qos: .userInitiated).async { continuation.resume(with: Result { try work() }) }
    }
  }

  var codec: RecordCodec<T> { RecordCodec(keys: cache.withLock { $0.keys }) }

  /// The path of the collection's records below the server's root.
  var recordsPath: String { "/buckets/\(bucket)/collections/\(remoteCollection)/records" }
}

/// The readers of a `CaskSync`'s events.
final class EventHub: Sendable {
  private struct Listeners {
    var next: UInt64 = 0
    var continuations: [UInt64: AsyncStream<SyncEvent>.Continuation] = [:]
  }
  private let listeners = Mutex(Listeners())

  func stream() -> AsyncStream<SyncEvent> {
    let (stream, continuation) = AsyncStream.makeStream(of: SyncEvent.self, bufferingPolicy: .bufferingNewest(256))
    let id = listeners.withLock { listeners in
      listeners.next += 1
      listeners.continuations[listeners.next] = continuation
      return listeners.next
    }
    continuation.onTermination = { [weak self] _ in
      _ = self?.listeners.withLock { $0.continuations.removeValue(forKey: id) }
    }
    return stream
  }

  func emit(_ event: SyncEvent) {
    let continuations = listeners.withLock { Array($0.continuations.values) }
    for continuation in continuations { continuation.yield(event) }
  }

  func finish() {
    let continuations = listeners.withLock { Array($0.continuations.values) }
    for continuation in continuations { continuation.finish() }
  }
}

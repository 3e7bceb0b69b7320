import CipherCask
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A `CaskCollection` mirrored from a REST resource: objects are fetched from and sent to
/// `baseURL` and upserted into the local collection by id (a REST client's base path and uid key).
///
/// - `pull(id:)`: `GET base/id`, upsert. `pullAll()`: `GET base`, following pages, upsert all
///   in one batch. `push(_:)`: `POST base` for an object the server has not seen, `PUT base/id`
///   for one it has, then upsert the server's answer. `delete(id:)`: `DELETE base/id`, then
///   remove locally.
/// - The outbox (`saveAndQueue`, `deleteAndQueue`, `pushPending`) changes the local collection
///   at once and sends later, surviving crashes; see RemoteCollection+Outbox.swift.
///
/// On any error the local store is unchanged by that call. All calls are `async` and
/// cancellable (`SyncError.cancelled`). The calls that send and store (`pull`, `pullAll`,
/// `push`, `delete`, `pushPending`) take turns per store and collection (`SyncSerializer`),
/// so answers are stored in the order the server gave them.
public struct RemoteCollection<T: Codable & Identifiable & Sendable>: Sendable
where T.ID: LosslessStringConvertible & Sendable {
  /// The local collection.
  public let local: CaskCollection<T>
  /// The resource's URL; an object lives at `baseURL/<remote id>`.
  public let baseURL: URL
  /// Where ids and objects sit in responses, pagination, request hooks.
  public let configuration: RemoteConfiguration
  let transport: HTTPTransport
  /// Takes turns with every other sync call that changes this collection's local state.
  let serializer: SyncSerializer

  /// - Parameters:
  ///   - local: the collection objects are upserted into.
  ///   - baseURL: the REST resource, for example `https://api.example.com/users`.
  ///   - configuration: the response shape and request hooks.
  ///   - session: the URLSession to use (an ephemeral one by default).
  public init(
    _ local: CaskCollection<T>, baseURL: URL, configuration: RemoteConfiguration = RemoteConfiguration(),
    session: URLSession? = nil
  ) {
    self.local = local
    self.baseURL = baseURL
    self.configuration = configuration
    self.transport = HTTPTransport(configuration: configuration, session: session)
    self.serializer = SyncSerializer.shared(path: local.store.resolvedPath, collection: local.name)
  }

  /// A hook that changes one request of one call (headers, query items).
  public typealias RequestHook = @Sendable (inout URLRequest) -> Void

  // MARK: Pull

  /// Fetches one object (`GET base/id`) and upserts it.
  ///
  /// - Returns: the object as stored.
  /// - Throws: `SyncError.http` (404 when the server has no such object), `.decoding`,
  ///   `.transport`, `.cancelled`; `CaskError` from the store.
  public func pull(
    id: T.ID, adjust: RequestHook? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil
  ) async throws -> T {
    try await serializer.run { try await pullOne(id: id, adjust: adjust, progress: progress) }
  }

  private func pullOne(
    id: T.ID, adjust: RequestHook?, progress: (@Sendable (SyncProgress) -> Void)?
  ) async throws -> T {
    let response = try await send(method: "GET", url: try objectURL(for: id), body: nil, adjust: adjust)
    let objects = try decodeObjects(from: response.body).objects
    guard objects.count == 1, let object = objects.first else {
      throw SyncError.decoding("expected one object, got \(objects.count)")
    }
    guard CaskCollection<T>.sameKey(object.id, id) else {
      throw SyncError.decoding("the server answered with another object's id")
    }
    try await store {
      try local.store.transaction { transaction in
        try transaction.put(local.coder.encode(object), forKey: local.storageKey(for: object.id))
        try metadata.record(etag: response.header("ETag"), for: object.id, in: &transaction)
      }
    }
    progress?(SyncProgress(objects: 1, bytes: Int64(response.body.count)))
    return object
  }

  /// Fetches every object (`GET base`, then each next page) and upserts them all in one
  /// atomic batch. Objects that exist locally but not remotely are left alone. A list has no
  /// ETags: what the client knew of an object is cleared, except for an object with changes
  /// queued, whose ETag those changes were made against (their conflict check).
  ///
  /// - Returns: how many objects were inserted and replaced.
  public func pullAll(
    adjust: RequestHook? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil
  ) async throws -> CaskCollection<T>.ImportResult {
    try await serializer.run { try await pullPages(adjust: adjust, progress: progress).imported }
  }

  /// `pullAll`'s work; with `deletingMissing`, also deletes (in the same batch) the local
  /// objects the listing did not hold, except those with changes queued (RemoteCollection+Mirror.swift).
  func pullPages(
    deletingMissing: Bool = false, adjust: RequestHook?, progress: (@Sendable (SyncProgress) -> Void)?
  ) async throws -> (imported: CaskCollection<T>.ImportResult, deleted: Int) {
    let (fetched, listed) = try await fetchPages(adjust: adjust, progress: progress)
    let outbox = self.outbox
    return try await store {
      try local.store.transaction { transaction in
        var tally = UpsertTally()
        let queue = try outbox.hasQueue(in: &transaction)
        for object in fetched {
          try transaction.upsert(
            local.coder.encode(object), forKey: local.storageKey(for: object.id), counting: &tally)
          // A list carries no ETags. What the client knew of an object with changes queued
          // stays: it is what those changes were made against, and their conflict check.
          if queue, try outbox.queuedCount(of: object.id.description, in: transaction) > 0 { continue }
          try metadata.record(etag: nil, for: object.id, in: &transaction)
        }
        let deleted = deletingMissing ? try removeMissing(keeping: listed, queue: queue, in: &transaction) : 0
        return (CaskCollection<T>.ImportResult(inserted: tally.inserted, replaced: tally.replaced), deleted)
      }
    }
  }

  // MARK: Push and delete

  /// Sends `object`: `POST base` if the server has not seen it, `PUT base/id` (with
  /// `If-Match` when an ETag is known) if it has; then upserts the server's answer (or
  /// `object` itself when the answer has no body).
  ///
  /// - Returns: the object as stored.
  /// - Throws: `SyncError.conflict` for 409/412 (nothing changes locally);
  ///   `SyncError.pendingChanges` when changes to the object are queued (nothing is sent: the
  ///   older queued change would undo this one); and as `pull`.
  @discardableResult
  public func push(
    _ object: T, adjust: RequestHook? = nil, progress: (@Sendable (SyncProgress) -> Void)? = nil
  ) async throws -> T {
    try await serializer.run {
      try await refuseIfQueued(object.id)
      return try await pushOne(object, adjust: adjust, progress: progress)
    }
  }

  private func pushOne(
    _ object: T, adjust: RequestHook?, progress: (@Sendable (SyncProgress) -> Void)?
  ) async throws -> T {
    let body = try jsonBody(for: object)
    let response = try await sendChange(id: object.id, body: body, changeID: nil, adjust: adjust)
    let stored = try answer(response, sent: object)
    try await store {
      try local.store.transaction { transaction in
        try transaction.put(local.coder.encode(stored), forKey: local.storageKey(for: stored.id))
        try metadata.record(etag: response.header("ETag"), for: stored.id, in: &transaction)
      }
    }
    progress?(SyncProgress(objects: 1, bytes: Int64(body.count + response.body.count)))
    return stored
  }

  /// Deletes the object remotely (`DELETE base/id`, with `If-Match` when an ETag is known),
  /// then locally. A 404 or 410 counts as already deleted.
  ///
  /// - Returns: whether a local object was removed.
  /// - Throws: `SyncError.pendingChanges` when changes to the object are queued (nothing is
  ///   sent), `SyncError.conflict` for 409/412, and as `pull`.
  @discardableResult
  public func delete(id: T.ID, adjust: RequestHook? = nil) async throws -> Bool {
    try await serializer.run {
      try await refuseIfQueued(id)
      return try await deleteOne(id: id, adjust: adjust)
    }
  }

  private func deleteOne(id: T.ID, adjust: RequestHook?) async throws -> Bool {
    _ = try await sendDelete(id: id, changeID: nil, adjust: adjust)
    return try await store {
      try local.store.transaction { transaction in
        let key = try local.storageKey(for: id)
        let existed = try transaction.contains(key)
        if existed { try transaction.delete(key) }
        try metadata.forget(id, in: &transaction)
        return existed
      }
    }
  }

  /// Throws `SyncError.pendingChanges` when changes to `id` wait in the outbox: a direct
  /// change sent before them would be undone by them.
  private func refuseIfQueued(_ id: T.ID) async throws {
    let outbox = self.outbox
    let queued = try await store { try outbox.queuedCount(of: id.description, in: local.store) }
    if queued > 0 { throw SyncError.pendingChanges(id: id.description) }
  }

  // MARK: Requests

  var metadata: SyncMetadata<T> { SyncMetadata(collection: local) }

  /// `baseURL/<remote id>`.
  ///
  /// - Throws: `CaskError.invalidKey` when the remote id is empty or has a `.` or `..` segment: resolved as a
  ///   URL (URLSession removes dot segments), such a path names the resource itself or its
  ///   parent, so a DELETE would answer 404 and count as done while the object stays.
  func objectURL(for id: T.ID) throws -> URL {
    let component = configuration.remoteID(id.description)
    // Each '/'-separated segment: `a/../b` resolves to `b`, another object, as `..` does.
    let segments = component.split(separator: "/", omittingEmptySubsequences: false)
    guard component != "", !segments.contains(where: { $0 == "." || $0 == ".." }) else {
      throw CaskError.invalidKey(
        reason:
          "a remote id that is empty or has a \".\" or \"..\" segment names another URL; map it with RemoteConfiguration.remoteID"
      )
    }
    return baseURL.appendingPathComponent(component)
  }

  func firstPageURL() -> URL {
    if case .page(let parameter, let first) = configuration.pagination {
      return pageURL(parameter: parameter, page: first)
    }
    return baseURL
  }

  func pageURL(parameter: String, page: Int) -> URL {
    PageLink.numbered(baseURL, parameter: parameter, page: page)
  }

  func jsonBody(for object: T) throws -> Data {
    do {
      return try configuration.makeEncoder().encode(object)
    } catch {
      throw SyncError.decoding("the object does not encode: \(CollectionError.summary(of: error))")
    }
  }

  /// POST or PUT a change; maps 409/412 to a conflict.
  func sendChange(id: T.ID, body: Data, changeID: String?, adjust: RequestHook?) async throws -> HTTPResponse {
    let known = try await store { try metadata.entry(for: id) }
    var headers = ["Content-Type": "application/json"]
    if let changeID { headers["Idempotency-Key"] = changeID }
    if let etag = known?.etag { headers["If-Match"] = etag }
    let method = known == nil ? "POST" : "PUT"
    let url = known == nil ? baseURL : try objectURL(for: id)
    let response = try await sendRaw(method: method, url: url, body: body, headers: headers, adjust: adjust)
    if response.status == 409 || response.status == 412 {
      throw SyncError.conflict(id: id.description, local: body, remote: response.body.isEmpty ? nil : response.body)
    }
    return try Self.checkStatus(response)
  }

  func sendDelete(id: T.ID, changeID: String?, adjust: RequestHook?) async throws -> HTTPResponse? {
    let known = try await store { try metadata.entry(for: id) }
    var headers: [String: String] = [:]
    if let changeID { headers["Idempotency-Key"] = changeID }
    if let etag = known?.etag { headers["If-Match"] = etag }
    let response = try await sendRaw(
      method: "DELETE", url: try objectURL(for: id), body: nil, headers: headers, adjust: adjust)
    switch response.status {
    case 404, 410:
      return nil
    case 409, 412:
      throw SyncError.conflict(id: id.description, local: nil, remote: response.body.isEmpty ? nil : response.body)
    default:
      return try Self.checkStatus(response)
    }
  }

  /// The object to store after a successful push: the server's answer, or what was sent.
  func answer(_ response: HTTPResponse, sent: T) throws -> T {
    guard !response.body.isEmpty else { return sent }
    let objects = try decodeObjects(from: response.body).objects
    guard objects.count == 1, let object = objects.first else {
      throw SyncError.decoding("expected one object in the answer, got \(objects.count)")
    }
    guard CaskCollection<T>.sameKey(object.id, sent.id) else {
      throw SyncError.decoding("the server answered with another object's id")
    }
    return object
  }

  /// Sends a request through the configured hooks and throws for a non-2xx status.
  func send(
    method: String, url: URL, body: Data?, headers: [String: String] = [:], adjust: RequestHook?
  ) async throws -> HTTPResponse {
    try Self.checkStatus(await sendRaw(method: method, url: url, body: body, headers: headers, adjust: adjust))
  }

  /// `response` if its status is 2xx, else `SyncError.http` with a short excerpt of the body.
  static func checkStatus(_ response: HTTPResponse) throws -> HTTPResponse {
    guard (200..<300).contains(response.status) else {
      throw response.failure
    }
    return response
  }

  /// Sends a request through the configured hooks; any status comes back.
  func sendRaw(
    method: String, url: URL, body: Data?, headers: [String: String] = [:], adjust: RequestHook?
  ) async throws -> HTTPResponse {
    try Self.checkCancelled()
    var request = URLRequest(url: url, timeoutInterval: configuration.timeout)
    request.httpMethod = method
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    request.httpBody = body
    configuration.prepareRequest(&request)
    adjust?(&request)
    do {
      return try await transport.send(request)
    } catch is CancellationError {
      throw SyncError.cancelled
    }
  }

  /// Throws `SyncError.cancelled` when the calling task has been cancelled.
  static func checkCancelled() throws {
    if Task.isCancelled { throw SyncError.cancelled }
  }

  /// Runs store work off the cooperative pool (disk I/O, encryption).
  func store<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
    try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global(qos: .userInitiated).async {
        continuation.resume(with: Result { try work() })
      }
    }
  }
}

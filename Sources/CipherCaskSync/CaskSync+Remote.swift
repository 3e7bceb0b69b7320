import CipherCask
import Foundation

extension CaskSync {
  /// The stored state, after making sure (once per collection and device) that the bucket and
  /// collection exist on the server and, in end-to-end mode, that the collection's metadata
  /// holds the key parameters; derives the end-to-end keys once per object.
  func prepare() async throws -> SyncLedger.State {
    let store = local.store
    let ledger = self.ledger
    var state = try await Self.offPool { try ledger.state(in: store) } ?? SyncLedger.State(remote: remoteIdentity)
    if !state.prepared || (passphrase != nil && state.keyParameters == nil) {
      try await createRemote(&state)
      state.prepared = true
      let prepared = state
      try await Self.offPool { try store.transaction { try ledger.write(prepared, in: &$0) } }
    }
    if let passphrase, cache.withLock({ $0.keys }) == nil {
      guard let parameters = state.keyParameters else { throw SyncError.decoding("no end-to-end key parameters") }
      let keys = try await Self.offPool { try EndToEndKeys(passphrase: passphrase, parameters: parameters) }
      cache.withLock { $0.keys = keys }
    }
    return state
  }

  /// Creates the bucket and the collection when the credentials allow it and they are missing,
  /// and reads (or, in end-to-end mode, adds) the key parameters.
  private func createRemote(_ state: inout SyncLedger.State) async throws {
    let bucketURL = server.endpoint("/buckets/\(bucket)")
    let created = try await client.send(
      "PUT", bucketURL, json: ["data": [String: Any]()], headers: ["If-None-Match": "*"])
    // 412: it exists; 401/403: not ours to create, but we may still write in it.
    guard (200..<300).contains(created.status) || [401, 403, 412].contains(created.status) else {
      throw created.failure
    }
    let collectionURL = server.endpoint("/buckets/\(bucket)/collections/\(remoteCollection)")
    var data: [String: Any]
    let found = try await client.send("GET", collectionURL)
    if (200..<300).contains(found.status) {
      data = try Self.data(of: found.body)
    } else if [401, 403, 404].contains(found.status) {
      var fresh: [String: Any] = [:]
      if let passphrase {
        let cost = newKeyCost
        let parameters = try await Self.offPool { try EndToEndKeys.newParameters(passphrase: passphrase, scrypt: cost) }
        fresh[Self.parametersField] = try Self.jsonObject(parameters)
      }
      let answer = try await client.send("PUT", collectionURL, json: ["data": fresh], headers: ["If-None-Match": "*"])
      if answer.status == 412 {
        data = try Self.existing(in: answer.body) ?? [:]
      } else {
        guard (200..<300).contains(answer.status) else { throw answer.failure }
        data = try Self.data(of: answer.body)
      }
    } else {
      throw found.failure
    }
    if let passphrase, data[Self.parametersField] == nil {
      // The collection exists without parameters: add them, unless another device just did.
      let cost = newKeyCost
      let parameters = try await Self.offPool { try EndToEndKeys.newParameters(passphrase: passphrase, scrypt: cost) }
      let modified = (data["last_modified"] as? NSNumber)?.int64Value ?? 0
      let answer = try await client.send(
        "PATCH", collectionURL, json: ["data": [Self.parametersField: try Self.jsonObject(parameters)]],
        headers: ["If-Match": "\"\(modified)\""])
      if answer.status == 412 {
        data = try Self.existing(in: answer.body) ?? [:]
      } else {
        guard (200..<300).contains(answer.status) else { throw answer.failure }
        data = try Self.data(of: answer.body)
      }
    }
    if passphrase != nil {
      guard let field = data[Self.parametersField] else {
        throw SyncError.decoding("the collection has no end-to-end key parameters")
      }
      do {
        let json = try JSONSerialization.data(withJSONObject: field)
        state.keyParameters = try JSONDecoder().decode(KeyParameters.self, from: json)
      } catch {
        throw SyncError.decoding("the collection's end-to-end key parameters do not decode")
      }
    }
  }

  /// The collection metadata field that holds end-to-end mode's key parameters.
  static var parametersField: String { "cipherCask" }

  /// The server's batch limit (`batch_max_requests` at the root), asked once per object.
  func batchLimit() async throws -> Int {
    if let limit = cache.withLock({ $0.batchLimit }) { return limit }
    let root = try await client.expect("GET", server.endpoint("/"))
    let object = try JSONSerialization.jsonObject(with: root.body) as? [String: Any]
    let settings = object?["settings"] as? [String: Any]
    let limit = max(1, (settings?["batch_max_requests"] as? NSNumber)?.intValue ?? 25)
    cache.withLock { $0.batchLimit = limit }
    return limit
  }

  // MARK: JSON helpers

  /// The `data` member of a Kinto answer.
  static func data(of body: Data) throws -> [String: Any] {
    guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
      let data = object["data"] as? [String: Any]
    else { throw SyncError.decoding("a Kinto answer has no data object") }
    return data
  }

  /// `details.existing` of a 412 answer: the server's current version, or `nil`.
  static func existing(in body: Data) throws -> [String: Any]? {
    let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
    return (object?["details"] as? [String: Any])?["existing"] as? [String: Any]
  }

  static func jsonObject<V: Encodable>(_ value: V) throws -> Any {
    try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
  }

  /// A Kinto timestamp from an ETag (`"1234"`).
  static func timestamp(fromETag etag: String?) -> Int64? {
    etag.flatMap { Int64($0.trimmingCharacters(in: CharacterSet(charactersIn: "\" W/"))) }
  }
}

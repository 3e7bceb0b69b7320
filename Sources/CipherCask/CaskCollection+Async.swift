import Dispatch
import Foundation

/// Runs blocking store work on a Dispatch queue so that async callers never block the
/// cooperative thread pool with disk I/O, PBKDF2 or fsync.
func offload<R: Sendable>(_ work: @escaping @Sendable () throws -> R) async throws -> R {
  try await withCheckedThrowingContinuation { continuation in
    DispatchQueue.global(qos: .userInitiated).async {
      continuation.resume(with: Result { try work() })
    }
  }
}

/// The `async` forms: the same operations, usable from any number of tasks at once.
extension CaskCollection {
  public func save(_ object: T) async throws {
    try await offload { try self.save(object) }
  }

  public func save(contentsOf objects: [T]) async throws {
    try await offload { try self.save(contentsOf: objects) }
  }

  public func get(id: T.ID) async throws -> T? {
    try await offload { try self.get(id: id) }
  }

  @discardableResult
  public func delete(id: T.ID) async throws -> Bool {
    try await offload { try self.delete(id: id) }
  }

  public func contains(id: T.ID) async throws -> Bool {
    try await offload { try self.contains(id: id) }
  }

  public func all() async throws -> [T] {
    try await offload { try self.all() }
  }

  public func all(onDecodingFailure policy: DecodingFailurePolicy) async throws -> DecodedObjects {
    try await offload { try self.all(onDecodingFailure: policy) }
  }

  public func ids() async throws -> [T.ID] {
    try await offload { try self.ids() }
  }

  public func filter(_ isIncluded: @escaping @Sendable (T) throws -> Bool) async throws -> [T] {
    try await offload { try self.filter(isIncluded) }
  }

  public func first(where predicate: @escaping @Sendable (T) throws -> Bool) async throws -> T? {
    try await offload { try self.first(where: predicate) }
  }

  public func fetch(
    where predicate: @escaping @Sendable (T) throws -> Bool = { _ in true },
    sortedBy areInIncreasingOrder: (@Sendable (T, T) throws -> Bool)? = nil,
    limit: Int? = nil, offset: Int = 0
  ) async throws -> [T] {
    try await offload {
      try self.fetch(where: predicate, sortedBy: areInIncreasingOrder, limit: limit, offset: offset)
    }
  }

  @discardableResult
  public func update(id: T.ID, _ mutate: @escaping @Sendable (inout T) throws -> Void) async throws -> T? {
    try await offload { try self.update(id: id, mutate) }
  }

  @discardableResult
  public func updateAll(
    where predicate: @escaping @Sendable (T) throws -> Bool, _ mutate: @escaping @Sendable (inout T) throws -> Void
  ) async throws -> Int {
    try await offload { try self.updateAll(where: predicate, mutate) }
  }

  @discardableResult
  public func deleteAll(where predicate: @escaping @Sendable (T) throws -> Bool) async throws -> Int {
    try await offload { try self.deleteAll(where: predicate) }
  }

  @discardableResult
  public func removeAll() async throws -> Int {
    try await offload { try self.removeAll() }
  }

  @discardableResult
  public func upsert(_ objects: [T]) async throws -> ImportResult {
    try await offload { try self.upsert(objects) }
  }

  @discardableResult
  public func importJSON(_ data: Data, decoder: JSONDecoder = JSONDecoder()) async throws -> ImportResult {
    let decoderBox = UncheckedSendable(decoder)
    return try await offload { try self.importJSON(data, decoder: decoderBox.value) }
  }
}

/// Carries a value the caller hands over and no longer touches across a queue hop.
struct UncheckedSendable<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

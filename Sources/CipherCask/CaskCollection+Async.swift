import Dispatch
import Foundation
import Synchronization

/// Runs blocking store work on a Dispatch queue so that async callers never block the
/// cooperative thread pool with disk I/O, PBKDF2 or fsync.
///
/// Cancellation: a task cancelled before the work starts (before the call, or while the work
/// waits for a thread) gets `CancellationError` and nothing was done. Once the work runs it
/// sees the cancellation through `cancelled` only: the calls with a predicate check it between
/// objects (a scan stops; a batch is abandoned before it commits, so nothing is applied), and
/// a write that has begun to commit finishes and returns normally.
func offload<R: Sendable>(
  _ work: @escaping @Sendable (_ cancelled: CancellationFlag) throws -> R
) async throws -> R {
  try Task.checkCancellation()
  let flag = CancellationFlag()
  return try await withTaskCancellationHandler {
    try await withCheckedThrowingContinuation { continuation in
      DispatchQueue.global(qos: .userInitiated).async {
        if flag.isSet {
          continuation.resume(throwing: CancellationError())
        } else {
          continuation.resume(with: Result { try work(flag) })
        }
      }
    }
  } onCancel: {
    flag.set()
  }
}

/// Set when the task that offloaded some work is cancelled; read by that work.
final class CancellationFlag: Sendable {
  private let value = Atomic(false)

  var isSet: Bool { value.load(ordering: .acquiring) }

  func set() { value.store(true, ordering: .releasing) }

  /// `predicate`, but throwing `CancellationError` once the flag is set.
  func checking<Argument>(
    _ predicate: @escaping @Sendable (Argument) throws -> Bool
  ) -> (Argument) throws -> Bool {
    { argument in
      if self.isSet { throw CancellationError() }
      return try predicate(argument)
    }
  }
}

/// The `async` forms: the same operations, usable from any number of tasks at once.
extension CaskCollection {
  public func save(_ object: T) async throws {
    try await offload { _ in try self.save(object) }
  }

  public func save<S: Sequence<T> & Sendable>(contentsOf objects: S) async throws {
    try await offload { _ in try self.save(contentsOf: objects) }
  }

  public func get(id: T.ID) async throws -> T? {
    try await offload { _ in try self.get(id: id) }
  }

  @discardableResult
  public func delete(id: T.ID) async throws -> Bool {
    try await offload { _ in try self.delete(id: id) }
  }

  public func contains(id: T.ID) async throws -> Bool {
    try await offload { _ in try self.contains(id: id) }
  }

  public func all() async throws -> [T] {
    try await offload { _ in try self.all() }
  }

  public func all(onDecodingFailure policy: DecodingFailurePolicy) async throws -> DecodedObjects {
    try await offload { _ in try self.all(onDecodingFailure: policy) }
  }

  public func ids() async throws -> [T.ID] {
    try await offload { _ in try self.ids() }
  }

  public func filter(_ isIncluded: @escaping @Sendable (T) throws -> Bool) async throws -> [T] {
    try await offload { try self.filter($0.checking(isIncluded)) }
  }

  public func first(where predicate: @escaping @Sendable (T) throws -> Bool) async throws -> T? {
    try await offload { try self.first(where: $0.checking(predicate)) }
  }

  public func fetch(
    where predicate: @escaping @Sendable (T) throws -> Bool = { _ in true },
    sortedBy areInIncreasingOrder: (@Sendable (T, T) throws -> Bool)? = nil,
    limit: Int? = nil, offset: Int = 0
  ) async throws -> [T] {
    try await offload {
      try self.fetch(where: $0.checking(predicate), sortedBy: areInIncreasingOrder, limit: limit, offset: offset)
    }
  }

  @discardableResult
  public func update(id: T.ID, _ mutate: @escaping @Sendable (inout T) throws -> Void) async throws -> T? {
    try await offload { _ in try self.update(id: id, mutate) }
  }

  @discardableResult
  public func updateAll(
    where predicate: @escaping @Sendable (T) throws -> Bool, _ mutate: @escaping @Sendable (inout T) throws -> Void
  ) async throws -> Int {
    try await offload { try self.updateAll(where: $0.checking(predicate), mutate) }
  }

  @discardableResult
  public func deleteAll(where predicate: @escaping @Sendable (T) throws -> Bool) async throws -> Int {
    try await offload { try self.deleteAll(where: $0.checking(predicate)) }
  }

  @discardableResult
  public func removeAll() async throws -> Int {
    try await offload { _ in try self.removeAll() }
  }

  @discardableResult
  public func upsert<S: Sequence<T> & Sendable>(_ objects: S) async throws -> ImportResult {
    try await offload { _ in try self.upsert(objects) }
  }

  @discardableResult
  public func importJSON(_ data: Data, decoder: JSONDecoder = JSONDecoder()) async throws -> ImportResult {
    let decoderBox = UncheckedSendable(decoder)
    return try await offload { _ in try self.importJSON(data, decoder: decoderBox.value) }
  }

  /// `importJSON(contentsOf:decoder:maximumObjectLength:progress:)` off the caller's thread.
  /// A task cancelled before the batch commits writes nothing (the file is read no further).
  @discardableResult
  public func importJSON(
    contentsOf url: URL, decoder: JSONDecoder = JSONDecoder(), maximumObjectLength: Int = 64 << 20,
    progress: (@Sendable (ImportProgress) -> Void)? = nil
  ) async throws -> ImportResult {
    let decoderBox = UncheckedSendable(decoder)
    return try await offload { cancelled in
      try self.importJSON(
        contentsOf: url, decoder: decoderBox.value, maximumObjectLength: maximumObjectLength, cancelled: cancelled,
        progress: progress)
    }
  }

  /// `verifyIndexes()` off the caller's thread: it reads and decodes every object.
  public func verifyIndexes() async throws -> IndexVerification {
    try await offload { _ in try self.verifyIndexes() }
  }

  /// `prepareIndexes()` off the caller's thread: call it at launch, and the first save or
  /// query does not pay for loading the indexes.
  public func prepareIndexes() async throws {
    try await offload { _ in try self.prepareIndexes() }
  }

  /// `exportJSON(to:encoder:)` off the caller's thread.
  @discardableResult
  public func exportJSON(to url: URL, encoder: JSONEncoder = JSONEncoder()) async throws -> Int {
    let encoderBox = UncheckedSendable(encoder)
    return try await offload { _ in try self.exportJSON(to: url, encoder: encoderBox.value) }
  }
}

/// Carries a value the caller hands over and no longer touches across a queue hop.
struct UncheckedSendable<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}

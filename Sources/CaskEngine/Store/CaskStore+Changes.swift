import Synchronization

/// One change to a key, as reported to observers.
public struct CaskChange: Sendable, Equatable {
  /// What happened to the key.
  public enum Kind: Sendable, Equatable {
    /// The key did not exist before.
    case inserted
    /// The key existed and got a new value.
    case updated
    /// The key was removed.
    case deleted
  }

  /// The key that changed (a secret: never logged by the store).
  public var key: String
  public var kind: Kind

  public init(key: String, kind: Kind) {
    self.key = key
    self.kind = kind
  }
}

/// Keeps a change observer registered until `cancel()` is called or it is released.
public final class CaskObservation: Sendable {
  private let cancelAction: Locked<(@Sendable () -> Void)?>

  init(cancel: @escaping @Sendable () -> Void) {
    cancelAction = Locked(cancel)
  }

  deinit {
    cancel()
  }

  /// Stops the observer; idempotent.
  public func cancel() {
    let action = cancelAction.withLock { action -> (@Sendable () -> Void)? in
      defer { action = nil }
      return action
    }
    action?()
  }
}

/// The registered observers of one store.
final class ChangeObservers: Sendable {
  typealias Handler = @Sendable ([CaskChange]) -> Void
  typealias CloseHandler = @Sendable () -> Void
  private struct Observer {
    let onChange: Handler
    let onClose: CloseHandler?
  }
  private let handlers = Locked<(next: UInt64, table: [UInt64: Observer], closed: Bool)>((0, [:], false))
  /// How many observers are registered; changed under `handlers`' lock.
  private let registered = Atomic<Int>(0)

  /// Whether any observer is registered: commits build their list of changes only then.
  var isObserved: Bool { registered.load(ordering: .acquiring) > 0 }

  /// Registers an observer; on a closed store, calls `onClose` at once instead.
  func add(_ handler: @escaping Handler, onClose: CloseHandler?) -> UInt64 {
    let id = handlers.withLock { state -> UInt64? in
      guard !state.closed else { return nil }
      state.next += 1
      state.table[state.next] = Observer(onChange: handler, onClose: onClose)
      registered.store(state.table.count, ordering: .releasing)
      return state.next
    }
    guard let id else {
      onClose?()
      return 0
    }
    return id
  }

  func remove(_ id: UInt64) {
    handlers.withLock { state in
      state.table[id] = nil
      registered.store(state.table.count, ordering: .releasing)
    }
  }

  func notify(_ changes: [CaskChange]) {
    guard !changes.isEmpty else { return }
    let current = handlers.withLock { Array($0.table.values) }
    for observer in current { observer.onChange(changes) }
  }

  /// Unregisters every observer and calls their `onClose`, once: the store is closed.
  func closeAll() {
    let closing = handlers.withLock { state -> [Observer] in
      state.closed = true
      defer {
        state.table.removeAll()
        registered.store(0, ordering: .releasing)
      }
      return Array(state.table.values)
    }
    for observer in closing { observer.onClose?() }
  }
}

extension CaskStore {
  /// Calls `handler` after every commit with the keys it inserted, updated and deleted, in
  /// commit order, until the returned observation is cancelled or released, or the store is
  /// closed.
  ///
  /// The handler runs on the committing thread while writes are serialized, so it must be
  /// quick and must not write to this store (hand the changes to a queue or an `AsyncStream`).
  ///
  /// - Parameter onClose: called once when the store is closed, after the handler has seen
  ///   every commit (at once if the store is already closed); the observer is then gone.
  public func observeChanges(
    _ handler: @escaping @Sendable ([CaskChange]) -> Void, onClose: (@Sendable () -> Void)? = nil
  ) -> CaskObservation {
    let id = observers.add(handler, onClose: onClose)
    return CaskObservation { [weak self] in self?.observers.remove(id) }
  }
}

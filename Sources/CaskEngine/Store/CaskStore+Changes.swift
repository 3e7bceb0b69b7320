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
///
/// Called in a set order: the observers that keep derived state (`observeChangesFirst`: the
/// in-memory index entries of the layer above) before every other, then in the order they
/// were registered. Prevents: an observer that re-reads a query on another thread (a query's
/// `observe()`) running before the entries it reads were brought up to date, seeing the
/// commit's objects but not its entries, and never showing that commit's results.
final class ChangeObservers: Sendable {
  typealias Handler = @Sendable ([CaskChange]) -> Void
  typealias CloseHandler = @Sendable () -> Void
  private struct Observer {
    let onChange: Handler
    let onClose: CloseHandler?
    let first: Bool
  }
  /// The registered observers with their ids, in the order they are called: the `first` ones,
  /// then the others, each in the order they were registered. Kept in that order as they come
  /// and go. Prevents: every commit of an observed store sorting a table of its observers into
  /// a new array (a lock held, two arrays made and each closure retained) to call them.
  private let handlers = Locked<(next: UInt64, ordered: [(id: UInt64, observer: Observer)], closed: Bool)>(
    (0, [], false))
  /// How many observers are registered; changed under `handlers`' lock.
  private let registered = Atomic<Int>(0)

  /// Whether any observer is registered: commits build their list of changes only then.
  var isObserved: Bool { registered.load(ordering: .acquiring) > 0 }

  /// Registers an observer; on a closed store, calls `onClose` at once instead.
  func add(_ handler: @escaping Handler, onClose: CloseHandler?, first: Bool = false) -> UInt64 {
    let id = handlers.withLock { state -> UInt64? in
      guard !state.closed else { return nil }
      state.next += 1
      let observer = Observer(onChange: handler, onClose: onClose, first: first)
      // After the last observer of its kind: ids grow, so each kind stays in registration order.
      let at = first ? (state.ordered.firstIndex { !$0.observer.first } ?? state.ordered.count) : state.ordered.count
      state.ordered.insert((state.next, observer), at: at)
      registered.store(state.ordered.count, ordering: .releasing)
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
      state.ordered.removeAll { $0.id == id }
      registered.store(state.ordered.count, ordering: .releasing)
    }
  }

  func notify(_ changes: [CaskChange]) {
    guard !changes.isEmpty else { return }
    let current = handlers.withLock { $0.ordered }
    for entry in current { entry.observer.onChange(changes) }
  }

  /// Unregisters every observer and calls their `onClose`, once: the store is closed.
  func closeAll() {
    let closing = handlers.withLock { state -> [(id: UInt64, observer: Observer)] in
      state.closed = true
      defer {
        state.ordered.removeAll()
        registered.store(0, ordering: .releasing)
      }
      return state.ordered
    }
    for entry in closing { entry.observer.onClose?() }
  }
}

extension CaskStore {
  /// Calls `handler` after every commit with the keys it inserted, updated and deleted, in
  /// commit order, until the returned observation is cancelled or released, or the store is
  /// closed.
  ///
  /// The handler runs on the committing thread while writes are serialized, so it must be
  /// quick and must not write to this store (hand the changes to a queue or an `AsyncStream`).
  /// Observers are called in the order they were registered.
  ///
  /// - Parameter onClose: called once when the store is closed, after the handler has seen
  ///   every commit (at once if the store is already closed); the observer is then gone.
  public func observeChanges(
    _ handler: @escaping @Sendable ([CaskChange]) -> Void, onClose: (@Sendable () -> Void)? = nil
  ) -> CaskObservation {
    let id = observers.add(handler, onClose: onClose)
    return CaskObservation { [weak self] in self?.observers.remove(id) }
  }

  /// `observeChanges`, called for each commit before every observer registered without it:
  /// for a layer above that keeps state derived from the commits (index entries in memory),
  /// so that the other observers, and the work they start on other threads, read that state
  /// with the commit in it. Observers are otherwise called in the order they were registered.
  package func observeChangesFirst(
    _ handler: @escaping @Sendable ([CaskChange]) -> Void, onClose: (@Sendable () -> Void)? = nil
  ) -> CaskObservation {
    let id = observers.add(handler, onClose: onClose, first: true)
    return CaskObservation { [weak self] in self?.observers.remove(id) }
  }
}

import Foundation

/// The `async` forms, streaming pages, and observing results.
extension CaskQuery {
  public func fetch() async throws -> [T] {
    try await offload { _ in try self.fetch() }
  }

  public func first() async throws -> T? {
    try await offload { _ in try self.first() }
  }

  public func ids() async throws -> [T.ID] {
    try await offload { _ in try self.ids() }
  }

  public func count() async throws -> Int {
    try await offload { _ in try self.count() }
  }

  public func explain() async throws -> String {
    try await offload { _ in try self.explain() }
  }

  /// Calls `body` with the query's objects a page of at most `size` at a time, in the
  /// query's order: the ids are worked out first, then each page's objects are read, so no
  /// more than one page of objects is held (plus the ids).
  ///
  /// - Throws: what `body` throws (no later page is read), and what `ids()` and `get` throw.
  public func forEachPage(size: Int = 100, _ body: ([T]) throws -> Void) throws {
    let ids = try self.ids()
    let size = max(1, size)
    var start = 0
    while start < ids.count {
      let page = try ids[start..<min(ids.count, start + size)].compactMap { try collection.get(id: $0) }
      try body(page)
      start += size
    }
  }

  /// The query's objects as an asynchronous sequence of pages of at most `size`, read as the
  /// consumer asks for them (bounded memory: one page ahead at most).
  public func pages(size: Int = 100) -> AsyncThrowingStream<[T], any Error> {
    let query = self
    let size = max(1, size)
    let state = Locked<(ids: [T.ID]?, next: Int)>((nil, 0))
    return AsyncThrowingStream(unfolding: {
      try await offload { _ in
        if state.withLock({ $0.ids }) == nil {
          let ids = try query.ids()
          state.withLock { $0.ids = ids }
        }
        let (ids, start) = state.withLock { ($0.ids ?? [], $0.next) }
        guard start < ids.count else { return nil }
        state.withLock { $0.next = start + size }
        return try ids[start..<min(ids.count, start + size)].compactMap { try query.collection.get(id: $0) }
      }
    })
  }

  /// The query's results now, and again after every commit that changes them (a result
  /// added, removed, reordered, or changed in any field), as an `AsyncThrowingStream`.
  ///
  /// A commit to the collection makes the query run again on a background queue; results
  /// equal to the last ones yielded (compared by their encoded bytes) are not yielded again.
  /// Commits that come while the query runs are folded into one run. The stream finishes
  /// when the store closes or the consumer's task is cancelled, and finishes with an error
  /// when a run of the query throws (an object that no longer decodes, say: the error
  /// `fetch()` would throw), rather than going quiet.
  public func observe() -> AsyncThrowingStream<[T], any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(
      of: [T].self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1))
    do {
      try collection.checkName()
    } catch {
      continuation.finish(throwing: error)
      return stream
    }
    let query = self
    let coder = collection.coder
    let prefix = collection.name + "\u{0}"
    let runner = QueryObserverRunner()
    let rerun: @Sendable () -> Void = {
      runner.request {
        let results: [T]
        do {
          results = try query.fetch()
        } catch {
          runner.close()
          continuation.finish(throwing: error)
          return
        }
        do {
          let encoded = try results.map { try coder.encode($0) }
          if runner.isNew(encoded) { continuation.yield(results) }
        } catch {
          runner.close()
          continuation.finish(throwing: error)
        }
      }
    }
    let observation = collection.store.observeChanges { changes in
      if changes.contains(where: { $0.key.utf8.starts(with: prefix.utf8) }) { rerun() }
    } onClose: {
      runner.close()
      continuation.finish()
    }
    continuation.onTermination = { _ in
      observation.cancel()
      runner.close()
    }
    rerun()
    return stream
  }
}

/// Runs an observed query again, one run at a time, folding requests that come during a run.
final class QueryObserverRunner: Sendable {
  private struct State {
    var running = false
    var again = false
    var closed = false
    var last: [Data]?
  }
  private let state = Locked(State())

  func request(_ work: @escaping @Sendable () -> Void) {
    let start = state.withLock { state -> Bool in
      guard !state.closed else { return false }
      if state.running {
        state.again = true
        return false
      }
      state.running = true
      return true
    }
    guard start else { return }
    DispatchQueue.global(qos: .utility).async {
      while true {
        work()
        let more = self.state.withLock { state -> Bool in
          if state.again && !state.closed {
            state.again = false
            return true
          }
          state.running = false
          return false
        }
        if !more { return }
      }
    }
  }

  /// Whether `results` differ from the last ones yielded (and remembers them).
  func isNew(_ results: [Data]) -> Bool {
    state.withLock { state in
      guard state.last != results, !state.closed else { return false }
      state.last = results
      return true
    }
  }

  func close() {
    state.withLock { $0.closed = true }
  }
}

extension CaskCollection {
  /// Calls `body` with every object a page of at most `size` at a time, in the order of
  /// `ids()`, holding at most one page of objects.
  public func forEachPage(size: Int = 100, _ body: ([T]) throws -> Void) throws {
    try query().forEachPage(size: size, body)
  }

  /// Every object as an asynchronous sequence of pages of at most `size`.
  public func pages(size: Int = 100) -> AsyncThrowingStream<[T], any Error> {
    query().pages(size: size)
  }
}

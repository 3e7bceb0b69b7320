import Foundation

/// Runs the reading side of an import (reading, splitting, decoding and encoding objects) on
/// a thread of its own while the caller's thread writes what it made: two cores instead of one.
///
/// The two meet in a bounded queue of chunks, so memory stays bounded whatever the input's
/// size; items arrive in the order they were made. What the producer throws reaches the
/// consumer after every item made before it, from `next()`; a consumer that stops (by
/// throwing, say) calls `stop()`, which makes the producer's next `emit` return `false` and
/// waits until its thread has ended. Nothing of the producer runs after `stop()` returns.
package final class ImportPipeline<Item>: @unchecked Sendable {
  /// Items handed over at a time: one lock and wake-up per chunk, not per object.
  package static var chunkLength: Int { 64 }
  /// Chunks that may wait: about 512 objects in flight.
  package static var capacity: Int { 8 }

  // Guarded by `condition`.
  private let condition = NSCondition()
  private var chunks: [[Item]] = []
  private var failure: (any Error)?
  private var produced = false
  private var stopped = false
  private var exited = false
  // The consumer's own.
  private var current: [Item] = []
  private var position = 0

  /// Starts `produce` on a new thread. It calls `emit` with each item, in order, and stops
  /// when `emit` returns `false`. Items go over a chunk at a time; `flush` (an item after which
  /// the producer may wait for its input) sends the chunk at once, so that a slow input (a
  /// pipe) does not hold items back.
  package init(produce: @escaping @Sendable (_ emit: (_ item: Item, _ flush: Bool) -> Bool) throws -> Void) {
    let thread = Thread { [self] in
      var chunk: [Item] = []
      chunk.reserveCapacity(Self.chunkLength)
      do {
        try produce { item, flush in
          chunk.append(item)
          guard flush || chunk.count >= Self.chunkLength else { return true }
          defer { chunk = [] }
          return self.push(chunk)
        }
        if !chunk.isEmpty { _ = push(chunk) }
        end(failure: nil)
      } catch {
        if !chunk.isEmpty { _ = push(chunk) }
        end(failure: error)
      }
    }
    // Decoding recurses as deep as the input nests (Foundation stops at 512 levels).
    thread.stackSize = 8 << 20
    thread.start()
  }

  /// Waits for room; `false` once the consumer stopped.
  private func push(_ chunk: [Item]) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    while chunks.count >= Self.capacity && !stopped { condition.wait() }
    guard !stopped else { return false }
    chunks.append(chunk)
    condition.broadcast()
    return true
  }

  private func end(failure: (any Error)?) {
    condition.lock()
    self.failure = failure
    produced = true
    exited = true
    condition.broadcast()
    condition.unlock()
  }

  /// The next item, or `nil` after the last.
  ///
  /// - Throws: what the producer threw, once every item before it was taken.
  package func next() throws -> Item? {
    if position < current.count {
      defer { position += 1 }
      return current[position]
    }
    condition.lock()
    defer { condition.unlock() }
    while chunks.isEmpty && !produced { condition.wait() }
    guard !chunks.isEmpty else {
      if let failure {
        self.failure = nil
        throw failure
      }
      return nil
    }
    current = chunks.removeFirst()
    condition.broadcast()
    position = 1
    return current[0]
  }

  /// Tells the producer to stop and waits until its thread has ended.
  package func stop() {
    condition.lock()
    defer { condition.unlock() }
    stopped = true
    chunks.removeAll()
    condition.broadcast()
    while !exited { condition.wait() }
  }
}

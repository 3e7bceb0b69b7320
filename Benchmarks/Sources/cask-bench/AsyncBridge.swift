import Dispatch
import Foundation

/// Runs async work (CipherCaskSync's API) from a synchronous subcommand and waits for it: the
/// dispatcher is synchronous, and a benchmark runs one thing at a time anyway.
enum AsyncBridge {
  /// Runs `work` in a detached task, blocks this thread until it ends, and returns its result.
  static func wait<R: Sendable>(_ work: @escaping @Sendable () async throws -> R) throws -> R {
    let done = DispatchSemaphore(value: 0)
    let result = ResultBox<R>()
    Task.detached {
      do { result.set(.success(try await work())) } catch { result.set(.failure(error)) }
      done.signal()
    }
    done.wait()
    return try result.get()
  }

  private final class ResultBox<R: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var result: Result<R, any Error>?

    func set(_ value: Result<R, any Error>) { lock.withLock { result = value } }
    func get() throws -> R {
      guard let result = lock.withLock({ result }) else { throw BenchError("no result") }
      return try result.get()
    }
  }
}

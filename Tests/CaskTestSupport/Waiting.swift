import Foundation

/// Waits until `condition` holds, checking it again every `interval` seconds, for at most
/// `timeout` seconds on the monotonic clock: the explicit wait of a test for another thread
/// or process to reach a point, in place of a sleep that guesses how long that takes.
///
/// - Returns: whether `condition` held. A test asserts on that, never on how long it took; the
///   timeout only ends a test that would otherwise hang.
@available(*, noasync, message: "use the async form, which suspends instead of blocking")
@discardableResult
public func waitUntil(timeout: Double = 120, interval: Double = 0.001, _ condition: () throws -> Bool) rethrows -> Bool
{
  let clock = ContinuousClock()
  let deadline = clock.now + .milliseconds(Int64(timeout * 1000))
  while try !condition() {
    guard clock.now < deadline else { return try condition() }
    Thread.sleep(forTimeInterval: interval)
  }
  return true
}

/// The `async` form of `waitUntil(timeout:interval:_:)`: it suspends between checks instead
/// of blocking its thread, and throws `CancellationError` when its task is cancelled.
@discardableResult
public func eventually(
  timeout: Double = 120, interval: Double = 0.001, _ condition: () async throws -> Bool
) async throws -> Bool {
  let clock = ContinuousClock()
  let deadline = clock.now + .milliseconds(Int64(timeout * 1000))
  while try await !condition() {
    guard clock.now < deadline else { return try await condition() }
    try await Task.sleep(for: .milliseconds(Int64(interval * 1000)))
  }
  return true
}

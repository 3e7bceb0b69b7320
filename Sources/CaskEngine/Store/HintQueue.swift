import Dispatch

/// Writes the hints of segments sealed because they filled up, one at a time, off the writer's
/// thread. Prevents: a put that fills a segment waiting while the hint of the whole segment is
/// encoded, sealed, written and synced (tens of milliseconds for a full 256 MiB segment of
/// 1 KiB values). A hint only speeds up the next open, which scans a segment that has none, so
/// nothing waits for it but `close()`, which drains the queue before it returns.
final class HintQueue: Sendable {
  private let queue = DispatchQueue(label: "CipherCask hints", qos: .utility)
  private let pending = DispatchGroup()

  /// Runs `job` after every job submitted before it.
  func submit(_ job: @escaping @Sendable () -> Void) {
    queue.async(group: pending, execute: job)
  }

  /// Waits until every job submitted so far has finished.
  func drain() {
    pending.wait()
  }
}

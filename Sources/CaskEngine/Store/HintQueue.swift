import Foundation

/// Writes the hints of segments sealed because they filled up, one at a time, off the writer's
/// thread. Prevents: a put that fills a segment waiting while the hint of the whole segment is
/// encoded, sealed, written and synced (tens of milliseconds for a full 256 MiB segment of
/// 1 KiB values). A hint only speeds up the next open, which scans a segment that has none, so
/// nothing waits for it but `close()`, which drains the queue before it returns.
///
/// A job holds what it writes with (`HintWriter`), never the store. Prevents: the job's own
/// release being the store's last reference, so that the store's `deinit` ran on this queue,
/// called `close()`, and waited in `drain()` for the job doing the waiting (forever, with the
/// store never closed and a dispatch worker thread lost).
final class HintQueue: Sendable {
  private let queue = DispatchQueue(label: "CipherCask hints", qos: .utility)
  private let pending = DispatchGroup()
  private static let onQueue = DispatchSpecificKey<Bool>()

  init() {
    queue.setSpecific(key: Self.onQueue, value: true)
  }

  /// Runs `job` after every job submitted before it.
  func submit(_ job: @escaping @Sendable () -> Void) {
    queue.async(group: pending, execute: job)
  }

  /// Waits until every job submitted so far has finished; returns at once when called from a
  /// job of this queue, which would otherwise wait for itself. The hints left unwritten then
  /// cost the next open a scan of their segments, nothing else.
  func drain() {
    guard DispatchQueue.getSpecific(key: Self.onQueue) == nil else { return }
    pending.wait()
  }
}

/// What a background hint job needs to write a sealed segment's hint and keep its failure:
/// the store's directory, file system and failure record, not the store itself (`HintQueue`).
struct HintWriter: Sendable {
  let directory: String
  let fileSystem: any FileSystem
  let failure: Locked<CaskError?>

  /// Writes `hint`, its entries put in record order first. Prevents: a durable write reported
  /// as failed (a full disk at close). A hint only speeds up the next open, which scans a
  /// segment that has none; the failure is kept for `CaskStore.backgroundWriteFailure`, not thrown.
  func write(_ hint: HintFile, cipher: RecordCipher) {
    var hint = hint
    hint.entries = hint.entries.sortedByOffset()
    do {
      try hint.write(in: directory, fileSystem: fileSystem, cipher: cipher)
    } catch {
      failure.withLock { $0 = CaskError.converting(error, operation: "write hint", path: directory) }
    }
  }
}

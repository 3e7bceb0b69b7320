import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Every `fdatasync` of the segment being appended to goes through here, one at a time, and
/// the first failure sticks: every later sync through the gate fails with it.
///
/// Why: after a failed `fdatasync` the kernel may have dropped the dirty pages, and it reports
/// the error to one caller only. Without the gate, a group-commit leader's failed sync and a
/// seal's successful one could overlap (the seal runs under the writer lock, the leader does
/// not), and the seal would mark as durable the writes whose pages the failure had lost
/// (found in review, session 4). With it, whichever sync comes second sees the failure.
final class SyncGate: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var failure: CaskError?

  /// Syncs `file`, unless a sync has failed before.
  ///
  /// - Throws: the first failure, `CaskError.io` with the errno.
  func sync(_ file: any StorageFile) throws {
    lock.lock()
    defer { lock.unlock() }
    if let failure { throw failure }
    do {
      try file.sync()
    } catch {
      let failed = error as? CaskError ?? .io(operation: "fdatasync", path: file.path, errno: EIO)
      failure = failed
      throw failed
    }
  }

  /// The failure that closed the gate, if any.
  var failed: CaskError? {
    lock.lock()
    defer { lock.unlock() }
    return failure
  }
}

import Foundation

/// The store's long copies in `async` form: run off the cooperative thread pool, and stopped
/// by the task's cancellation. In `async` code Swift picks these over the blocking forms, so
/// a call there is written `try await store.backup(to:)` (`try store.backup(to:)` without
/// `await` does not compile in an `async` function).
extension CaskStore {
  /// `backup(to:shouldContinue:)` on a Dispatch thread. Cancelling the task stops the copy
  /// before its next MiB: what it wrote is removed and the call throws `CancellationError`.
  /// A copy whose header is being put in place completes.
  @discardableResult
  public func backup(to destination: String) async throws -> CaskBackupReport {
    try await offload { cancelled in
      try self.backup(to: destination, shouldContinue: { !cancelled.isSet })
    }
  }

  /// `rekeyedCopy(to:password:shouldContinue:)` on a Dispatch thread. Cancelling the task
  /// stops the copy before its next key: the hidden directory is removed, `destination` is not
  /// made, and the call throws `CancellationError`.
  @discardableResult
  public func rekeyedCopy(to destination: String, password: String) async throws -> CaskRekeyReport {
    try await offload { cancelled in
      try self.rekeyedCopy(to: destination, password: password, shouldContinue: { !cancelled.isSet })
    }
  }

  /// `rekeyedCopy(to:keys:shouldContinue:)` on a Dispatch thread, stopped by the task's
  /// cancellation as `rekeyedCopy(to:password:)` is.
  @discardableResult
  public func rekeyedCopy(to destination: String, keys: RNCryptor.Keys) async throws -> CaskRekeyReport {
    try await offload { cancelled in
      try self.rekeyedCopy(to: destination, keys: keys, shouldContinue: { !cancelled.isSet })
    }
  }
}

import Foundation
import RNCryptorCodec

extension CaskStore {
  /// Replaces the password. Only the header changes: the data key that encrypts every record
  /// is re-wrapped under the new password and the header is replaced atomically (temporary
  /// file, sync, rename, directory sync). After a crash at any point the store opens with the
  /// old password or the new one, and no record is touched.
  ///
  /// - Throws: `.readOnly`, `.closed`, `.invalidKey` for an empty password, `.io`. An `.io`
  ///   error from the last step (the directory sync, after the new header was renamed into
  ///   place) leaves it unknown which header the disk keeps: as after a crash, the store then
  ///   opens with the old password or the new one, so keep both until one has opened it.
  /// - Complexity: O(1) in the size of the store; two PBKDF2 runs, made before the writer lock
  ///   is taken, so writers wait only for the header's write.
  public func changePassword(to newPassword: String) throws {
    guard !newPassword.isEmpty else { throw CaskError.invalidKey(reason: "the password is empty") }
    try replaceCredential(with: .password(SecureBytes(utf8: newPassword)))
  }

  /// Replaces the keys a store was opened with (or its password) by `newKeys`; as
  /// `changePassword(to:)`, in O(1).
  public func changeKeys(to newKeys: RNCryptor.Keys) throws {
    try replaceCredential(with: .keys(newKeys))
  }

  private func replaceCredential(with credential: StoreCredential) throws {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("a password change")
    // Derived before the writer lock is taken. Prevents: every writer stalling for the two
    // PBKDF2 runs of the new password. (The data key never changes, so the wrap cannot go
    // stale while it waits for the lock.)
    let header = try credential.wrap(StoreCredential.concatenate(cipher.keys), version: cipher.version)
    try writer.withLock { writer in
      if writer.closed { throw CaskError.closed }
      try StoreOpener.writeHeader(
        header, at: "\(path)/\(CaskFormat.headerFileName)", fileSystem: fileSystem, directory: path)
    }
  }
}

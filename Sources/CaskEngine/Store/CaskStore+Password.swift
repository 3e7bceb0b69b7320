import Foundation
import RNCryptorCodec

extension CaskStore {
  /// Replaces the password. Only the header changes: the data key that encrypts every record
  /// is re-wrapped under the new password and the header is replaced atomically (temporary
  /// file, sync, rename, directory sync). After a crash at any point the store opens with the
  /// old password or the new one, and no record is touched.
  ///
  /// The new header derives its keys as `keyDerivation` says; without it, as the store's
  /// header does now (`self.keyDerivation`: a `.rncryptor` store stays one, a scrypt store
  /// keeps its parameters), and for a store opened with keys as `options.keyDerivation`.
  /// Pass `.standard` to move a `.rncryptor` store to scrypt.
  ///
  /// - Throws: `.readOnly`, `.closed`, `.invalidKey` for an empty password or scrypt
  ///   parameters out of bounds, `.io`. An `.io`
  ///   error from the last step (the directory sync, after the new header was renamed into
  ///   place) leaves it unknown which header the disk keeps: as after a crash, the store then
  ///   opens with the old password or the new one, so keep both until one has opened it.
  /// - Complexity: O(1) in the size of the store; one scrypt run (or two PBKDF2 runs), made
  ///   before the writer lock is taken, so writers wait only for the header's write.
  public func changePassword(to newPassword: String, keyDerivation: KeyDerivation? = nil) throws {
    guard !newPassword.isEmpty else { throw CaskError.invalidKey(reason: "the password is empty") }
    let derivation = keyDerivation ?? self.keyDerivation ?? options.keyDerivation
    try replaceCredential(with: .password(SecureBytes(utf8: newPassword)), keyDerivation: derivation)
  }

  /// Replaces the keys a store was opened with (or its password) by `newKeys`; as
  /// `changePassword(to:)`, in O(1).
  public func changeKeys(to newKeys: RNCryptor.Keys) throws {
    try replaceCredential(with: .keys(newKeys), keyDerivation: options.keyDerivation)
  }

  private func replaceCredential(with credential: StoreCredential, keyDerivation: KeyDerivation) throws {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("a password change")
    // Derived before the writer lock is taken. Prevents: every writer stalling for the scrypt
    // run (or two PBKDF2 runs) of the new password. (The data key never changes, so the wrap
    // cannot go stale while it waits for the lock.)
    let header = try credential.wrap(
      StoreCredential.concatenate(cipher.keys), version: cipher.version, keyDerivation: keyDerivation)
    try writer.withLock { writer in
      if writer.closed { throw CaskError.closed }
      try StoreOpener.writeHeader(
        header, at: "\(path)/\(CaskFormat.headerFileName)", fileSystem: fileSystem, directory: path)
      headerKeyDerivation.withLock { $0 = header.keyDerivation }
    }
  }
}

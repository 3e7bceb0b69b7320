import Foundation
import RNCryptorCodec

extension CaskStore {
  /// Replaces the password and starts a new **key epoch** (Docs/FORMAT.md, section 3a): a new
  /// random data key, wrapped under the new password, seals everything written from now on;
  /// the older keys move into the header's key ring, sealed under the new one, for the records
  /// written before. So an old header, with the old password, opens nothing written after the
  /// change. Compaction (`compact()`, `rotateKeys()`, or the automatic one) then seals the
  /// older records again under the current key, and drops the older keys from the header:
  /// from then on an old header opens nothing current. `keyEpochs` says how much is left.
  ///
  /// Under the writer lock, in this order, each step leaving a store that opens with the old
  /// password or the new one and loses nothing: the segment being written is sealed; a
  /// manifest under the old key lists every segment; the new header (the old key ring plus
  /// the old key, and that manifest's digest, which open then accepts) replaces `CASK`
  /// atomically; a manifest under the new key; the header again without the pinned digest.
  ///
  /// A version 2 store (no manifest, records not bound to their place) has no key epochs: its
  /// data key is re-wrapped under the new password, as before (upgrade it to get them).
  ///
  /// The new header derives its keys as `keyDerivation` says; without it, as the store's
  /// header does now (`self.keyDerivation`: a `.rncryptor` store stays one, a scrypt store
  /// keeps its parameters), and for a store opened with keys as `options.keyDerivation`.
  /// Pass `.standard` to move a `.rncryptor` store to scrypt.
  ///
  /// - Throws: `.readOnly`, `.closed`, the failure of an earlier sync, `.invalidKey` for an
  ///   empty password or scrypt parameters out of bounds, `.io`. An `.io` error while the new
  ///   header was written leaves it unknown which header the disk keeps when the new one is
  ///   already in place (the directory sync failed): writes then stop until the store is
  ///   reopened, and as after a crash it opens with the old password or the new one, so keep
  ///   both until one has opened it.
  /// - Complexity: O(1) in the size of the store; one scrypt run (or two PBKDF2 runs), made
  ///   before the writer lock is taken, so writers wait only for a seal and a few small
  ///   files' writes.
  public func changePassword(to newPassword: String, keyDerivation: KeyDerivation? = nil) throws {
    guard !newPassword.isEmpty else { throw CaskError.invalidKey(reason: "the password is empty") }
    let derivation = keyDerivation ?? self.keyDerivation ?? options.keyDerivation
    try replaceCredential(with: .password(SecureBytes(utf8: newPassword)), keyDerivation: derivation)
  }

  /// Replaces the keys a store was opened with (or its password) by `newKeys`, starting a new
  /// key epoch as `changePassword(to:)` does, in O(1).
  public func changeKeys(to newKeys: RNCryptor.Keys) throws {
    try replaceCredential(with: .keys(newKeys), keyDerivation: options.keyDerivation)
  }

  private func replaceCredential(with credential: StoreCredential, keyDerivation: KeyDerivation) throws {
    guard !options.readOnly else { throw CaskError.readOnly }
    try userCode.refuse("a password change")
    let current = cipher
    guard current.bindsRecords else {
      return try rewrap(current, under: credential, keyDerivation: keyDerivation)
    }
    // Made and wrapped before the writer lock is taken. Prevents: every writer stalling for
    // the scrypt run (or two PBKDF2 runs) of the new password.
    let newKeys = try RNCryptor.Keys.random()
    // A version 5 store stays one (its identity with it); a version 3 one becomes version 4.
    let identity = keyRing.withLock { $0.identity }
    let wrapped = try credential.wrap(
      StoreCredential.concatenate(newKeys),
      version: identity == nil ? CaskFormat.keyEpochsVersion : CaskFormat.authenticatedVersion,
      keyDerivation: keyDerivation)
    try writer.withLock { writer in
      try writer.throwIfClosed()
      try writer.throwIfFailed()
      let ring = keyRing.withLock { $0 }
      guard ring.current.epoch < CaskFormat.maximumKeyEpoch else {
        throw CaskError.invalidKey(reason: "no key epoch is left after this one; make a rekeyed copy")
      }
      // 1. The epoch's last segment is sealed: from here on, writes go to a new segment.
      if let active = writer.active { try seal(active, writer: &writer) }
      // The checkpoint is sealed under the old key, which open no longer reads it with.
      retireCheckpoint(writer: &writer)
      // 2. A manifest under the old key: the one the new header pins, so that a crash before
      // the first manifest under the new key is not taken for tampering.
      guard let digest = try writeManifest(&writer) else { throw CaskError.closed }
      // 3. The new header: the new key wrapped under the new credential, the older keys (the
      // old current one always, others while a segment is under them) in its ring.
      let next = nextKeyRing(after: ring, newKeys: newKeys, pinning: digest, writer: writer)
      var header = wrapped
      header.keyRing = try next.sealed()
      header.identity = next.identity
      header = try header.authenticated(with: newKeys)
      try writeNewHeader(header, writer: &writer)
      keyRing.withLock { $0 = next }
      writer.header = header
      headerKeyDerivation.withLock { $0 = header.keyDerivation }
      // 4. A manifest under the new key, then 5. the header without the pinned digest. A
      // failure of either is kept like a manifest's (the store is consistent without them:
      // the pin stays until a writable open or a compaction drops it).
      do {
        try writeManifest(&writer)
        try trimKeyRing(&writer)
      } catch {
        keepBackgroundFailure(error, operation: "write manifest")
      }
    }
  }

  /// The key ring of the epoch after `ring`'s: `newKeys` current, `ring`'s current key and
  /// the older ones a segment is still under kept, the manifest sealed under the old key
  /// (whose `digest` is given) pinned.
  private func nextKeyRing(
    after ring: KeyRing, newKeys: RNCryptor.Keys, pinning digest: [UInt8], writer: WriterState
  ) -> KeyRing {
    var next = KeyRing(
      current: RecordCipher(keys: newKeys, version: ring.current.version, epoch: ring.current.epoch + 1))
    next.hasEpochs = true
    next.identity = ring.identity
    let inUse = epochsInUse(writer)
    next.older = ring.older.filter { inUse.contains($0.key) }
    next.older[ring.current.epoch] = ring.current
    next.pinnedManifest = KeyRing.PinnedManifest(epoch: ring.current.epoch, digest: digest)
    return next
  }

  /// Writes the header that starts a new key epoch, under the writer lock.
  ///
  /// - Throws: the write's error. One that leaves the new header in place but perhaps not
  ///   durable (the directory sync failed) also becomes the writer's failure: which header a
  ///   crash keeps is unknown, so no more writes under either key until the store is reopened.
  private func writeNewHeader(_ header: StoreHeader, writer: inout WriterState) throws {
    let headerPath = "\(path)/\(CaskFormat.headerFileName)"
    do {
      try StoreOpener.writeHeader(header, at: headerPath, fileSystem: fileSystem, directory: path)
    } catch {
      if (try? Self.contents(of: headerPath, fileSystem: fileSystem)) != Data(header.encoded()) {
        throw error
      }
      writer.failure = CaskError.converting(error, operation: "write header", path: headerPath)
      throw error
    }
  }

  /// A version 2 store's password change: the same data key, re-wrapped.
  private func rewrap(_ current: RecordCipher, under credential: StoreCredential, keyDerivation: KeyDerivation) throws {
    let header = try credential.wrap(
      StoreCredential.concatenate(current.keys), version: current.version, keyDerivation: keyDerivation)
    try writer.withLock { writer in
      try writer.throwIfClosed()
      try StoreOpener.writeHeader(
        header, at: "\(path)/\(CaskFormat.headerFileName)", fileSystem: fileSystem, directory: path)
      writer.header = header
      headerKeyDerivation.withLock { $0 = header.keyDerivation }
    }
  }
}

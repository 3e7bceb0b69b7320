import Foundation

extension CaskStore {
  /// A small opaque value (base64 text) that states how far this store's history has come:
  /// its manifest generation and last sequence number, sealed under the current data key. Keep it
  /// outside the store's directory (a keychain, a server) and give it back to
  /// `checkFreshness(against:)` or `Options.expectedIntegrityToken`: a store older than the
  /// token, such as a whole directory put back from an older copy, is then refused. Version 3
  /// stores only.
  ///
  /// Take it after `sync()` (or under `.always`): writes that a crash may still take are in it.
  /// Take a new one after a password change: a token sealed under an older key epoch is
  /// checked only while the store still holds that epoch's key (until the rotation finishes).
  ///
  /// - Throws: `CaskError.unsupportedVersion` for a version 2 store, `.closed`, `.crypto`.
  /// - Complexity: one small encryption.
  public func integrityToken() throws -> String {
    guard cipher.bindsRecords else {
      throw CaskError.unsupportedVersion(found: Int(cipher.version), supported: Int(CaskFormat.formatVersion))
    }
    let (generation, sequence) = try writer.withLock { writer -> (UInt64, UInt64) in
      try writer.throwIfClosed()
      return (writer.manifestGeneration, writer.nextSequence - 1)
    }
    var plaintext = ByteWriter(capacity: CaskFormat.tokenPlaintextLength)
    plaintext.append(CaskFormat.messageTagToken)
    plaintext.append(UInt8(0))
    plaintext.append(generation)
    plaintext.append(sequence)
    return try cipher.seal(Data(plaintext.bytes)).base64EncodedString()
  }

  /// Refuses the store when it is older than the state `token` was taken at.
  ///
  /// - Throws: `CaskError.integrityViolation` when the store's manifest generation or last
  ///   sequence number is below the token's, or the token is not one of this store's.
  /// - Complexity: one small decryption.
  public func checkFreshness(against token: String) throws {
    let (generation, sequence) = try writer.withLock { writer -> (UInt64, UInt64) in
      try writer.throwIfClosed()
      return (writer.manifestGeneration, writer.nextSequence - 1)
    }
    try Self.checkFreshness(
      token, generation: generation, lastSequence: sequence, ring: keyRing.withLock { $0 })
  }

  /// `checkFreshness(against:)` for a store's generation and last sequence: the token must
  /// authenticate under the current key or an older one the ring still holds.
  static func checkFreshness(_ token: String, generation: UInt64, lastSequence: UInt64, ring: KeyRing) throws {
    let name = CaskFormat.manifestFileName
    let ciphers = [ring.current] + ring.olderEpochs.reversed().compactMap { ring.older[$0] }
    guard let message = Data(base64Encoded: token.trimmingCharacters(in: .whitespacesAndNewlines)),
      let plaintext = ciphers.lazy.compactMap({ try? $0.open(message, file: "token", offset: 0) }).first,
      plaintext.count == CaskFormat.tokenPlaintextLength,
      plaintext[plaintext.startIndex] == CaskFormat.messageTagToken, plaintext[plaintext.startIndex + 1] == 0
    else {
      throw CaskError.integrityViolation(
        file: name,
        reason:
          "the integrity token is not one of this store's (or it was taken before a password change whose "
          + "key rotation has finished)")
    }
    let (tokenGeneration, tokenSequence) = plaintext.withUnsafeBytes {
      (
        loadLittleEndian($0, at: CaskFormat.tokenGenerationOffset, as: UInt64.self),
        loadLittleEndian($0, at: CaskFormat.tokenSequenceOffset, as: UInt64.self)
      )
    }
    guard generation >= tokenGeneration, lastSequence >= tokenSequence else {
      throw CaskError.integrityViolation(
        file: name,
        reason:
          "the store is older than the integrity token (generation \(generation) < \(tokenGeneration) "
          + "or last sequence \(lastSequence) < \(tokenSequence)): an older copy of the store")
    }
  }
}

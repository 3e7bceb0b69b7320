import Foundation

extension RNCryptor {
  /// Decrypts a message piece by piece, for inputs too large to hold in memory.
  ///
  /// **The plaintext returned by `update(_:)` is unauthenticated.** The HMAC sits at the end of
  /// the message, so nothing can be known about the integrity of the bytes before it until
  /// `finalize()` has checked it. A caller must treat earlier output as provisional: write it
  /// somewhere it can be discarded (as `decryptFile` does, renaming into place only after
  /// `finalize()` succeeds), and never act on it before then.
  ///
  /// Memory stays bounded by the chunk size: the decryptor holds back only the last 32 bytes
  /// (the candidate HMAC) and one cipher block.
  ///
  /// A decryptor is used by one thread at a time; it is not `Sendable`.
  public final class Decryptor {
    private enum Credential {
      case password(SecureBytes)
      case keys(Keys)
      case cache(PasswordKeyCache)
    }

    private struct Active {
      let cipher: CipherContext
      let hmac: HMACContext
    }

    private let credential: Credential
    private var headerBytes = Data()
    private var active: Active?
    private var headerLength = 0
    /// The last bytes seen, which may be the HMAC; never more than 32.
    private var tail = Data()
    private var ciphertextLength = 0
    private var finished = false

    /// Decrypts a password message (two PBKDF2 runs once the salts have arrived).
    public init(password: String) {
      credential = .password(SecureBytes(utf8: password))
    }

    /// Decrypts a password message with keys from a cache.
    public init(passwordKeyCache: PasswordKeyCache) {
      credential = .cache(passwordKeyCache)
    }

    /// Decrypts a key message.
    public init(keys: Keys) {
      credential = .keys(keys)
    }

    /// Decrypts the next chunk of the message.
    ///
    /// - Returns: more plaintext, **not yet authenticated** (see the type's documentation).
    /// - Throws: header errors (`.unknownVersion`, `.unknownOptions`, `.wrongCredentialType`,
    ///   `.emptyPassword`) as soon as the header has arrived; `.streamFinished`.
    public func update(_ chunk: Data) throws -> Data {
      if finished { throw Error.streamFinished }
      do {
        guard active != nil else {
          headerBytes.append(chunk)
          guard try startIfHeaderComplete() else { return Data() }
          let rest = headerBytes.dropFirst(headerLength)
          headerBytes = headerBytes.prefix(headerLength)
          return try process(Data(rest))
        }
        return try process(chunk)
      } catch {
        finished = true
        throw error
      }
    }

    /// Ends the message: checks its length and HMAC, then the padding.
    ///
    /// - Returns: the last plaintext bytes.
    /// - Throws: `.authenticationFailed` for a wrong password or key or any modification;
    ///   `.messageTooShort` for a truncated message; `.badPadding`; `.streamFinished`.
    public func finalize() throws -> Data {
      if finished { throw Error.streamFinished }
      finished = true
      let received = headerLength + ciphertextLength + tail.count
      guard let active, tail.count == Format.hmacLength, ciphertextLength >= Format.blockLength,
        ciphertextLength % Format.blockLength == 0
      else {
        let type = (try? Format.credentialType(of: headerBytes)) ?? .keys
        throw Error.messageTooShort(
          length: active == nil ? headerBytes.count : received, minimum: Format.minimumLength(type))
      }
      var computed = Data(count: Format.hmacLength)
      try computed.withUnsafeMutableBytes { try active.hmac.finish(into: $0.baseAddress!) }
      guard constantTimeEqual(computed, tail) else { throw Error.authenticationFailed }
      var output = Data(count: Format.blockLength)
      let written = output.withUnsafeMutableBytes { active.cipher.finish(into: $0.baseAddress!) }
      guard let written else { throw Error.badPadding }
      output.count = written
      return output
    }

    /// Parses the header once enough bytes have arrived and sets up the cipher and HMAC.
    private func startIfHeaderComplete() throws -> Bool {
      guard headerBytes.count >= 2 else { return false }
      let type = try Format.credentialType(of: headerBytes)
      switch (type, credential) {
      case (.keys, .password), (.keys, .cache): throw Error.wrongCredentialType(message: .keys)
      case (.password, .keys): throw Error.wrongCredentialType(message: .password)
      default: break
      }
      headerLength = Format.headerLength(type)
      guard headerBytes.count >= headerLength else { return false }
      let header = Data(headerBytes.prefix(headerLength))
      let keys: Keys
      switch credential {
      case .keys(let given):
        keys = given
      case .password(let password):
        let salts = RNCryptor.salts(fromHeader: header)
        keys = try Keys(password: password, encryptionSalt: salts.encryption, hmacSalt: salts.hmac)
      case .cache(let cache):
        let salts = RNCryptor.salts(fromHeader: header)
        keys = try cache.keys(encryptionSalt: salts.encryption, hmacSalt: salts.hmac).keys
      }
      let iv = header.suffix(Format.ivLength)
      let cipher = try iv.withUnsafeBytes { try keys.cipher.start(iv: $0, encrypt: false) }
      let hmac = try keys.hmac.start()
      try header.withUnsafeBytes { try hmac.update($0) }
      active = Active(cipher: cipher, hmac: hmac)
      return true
    }

    /// Feeds everything but the last 32 bytes seen to the HMAC and the cipher.
    private func process(_ chunk: Data) throws -> Data {
      guard let active else { return Data() }
      var output = Data()
      let ready: [Data]
      if chunk.count >= Format.hmacLength {
        ready = [tail, chunk.prefix(chunk.count - Format.hmacLength)]
        tail = Data(chunk.suffix(Format.hmacLength))
      } else {
        var combined = tail
        combined.append(chunk)
        let readyCount = Swift.max(0, combined.count - Format.hmacLength)
        ready = [combined.prefix(readyCount)]
        tail = Data(combined.dropFirst(readyCount))
      }
      let readyCount = ready.reduce(0) { $0 + $1.count }
      output.count = readyCount + Format.blockLength
      var written = 0
      try output.withUnsafeMutableBytes { buffer in
        for piece in ready where !piece.isEmpty {
          try piece.withUnsafeBytes { bytes in
            try active.hmac.update(bytes)
            written += try active.cipher.update(bytes, into: buffer.baseAddress!.advanced(by: written))
          }
        }
      }
      ciphertextLength += readyCount
      output.count = written
      return output
    }
  }
}

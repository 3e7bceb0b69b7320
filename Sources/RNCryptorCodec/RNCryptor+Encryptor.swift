import Foundation

extension RNCryptor {
  /// Encrypts a message piece by piece, for inputs too large to hold in memory.
  ///
  /// Feed the plaintext to `update(_:)` in chunks of any size and write out what each call
  /// returns; `finalize()` returns the last block and the HMAC. The concatenated outputs are one
  /// RNCryptor v3 message, identical in form to what `RNCryptor.encrypt` produces. Memory stays
  /// bounded by the chunk size.
  ///
  /// An encryptor is used by one thread at a time; it is not `Sendable`.
  public final class Encryptor {
    private var pendingHeader: Data?
    private let cipher: CipherContext
    private let hmac: HMACContext
    private var finished = false

    /// A password message with fresh salts (two PBKDF2 runs here).
    public convenience init(password: String) throws {
      try self.init(passwordKeys: PasswordKeys(password: password))
    }

    /// A password message using keys derived earlier for a salt pair.
    public convenience init(passwordKeys: PasswordKeys) throws {
      try self.init(keys: passwordKeys.keys, salts: (passwordKeys.encryptionSalt, passwordKeys.hmacSalt))
    }

    /// A key message.
    public convenience init(keys: Keys) throws {
      try self.init(keys: keys, salts: nil)
    }

    private init(keys: Keys, salts: (Data, Data)?) throws {
      var header = Data([Format.version, salts == nil ? Format.keyOptions : Format.passwordOptions])
      if let (encryptionSalt, hmacSalt) = salts {
        header.append(encryptionSalt)
        header.append(hmacSalt)
      }
      let iv = try LibCrypto.randomData(count: Format.ivLength)
      header.append(iv)
      cipher = try iv.withUnsafeBytes { try keys.cipher.start(iv: $0, encrypt: true) }
      hmac = try keys.hmac.start()
      try header.withUnsafeBytes { try hmac.update($0) }
      pendingHeader = header
    }

    /// Encrypts the next chunk of plaintext.
    ///
    /// - Returns: the next bytes of the message (the header first, then ciphertext); may be
    ///   empty while less than a block is buffered.
    /// - Throws: `.streamFinished` after `finalize()` or a failure; `.libcrypto`.
    public func update(_ chunk: Data) throws -> Data {
      try ensureActive()
      do {
        var output = takeHeader(reserving: chunk.count + Format.blockLength)
        let start = output.count
        output.count += chunk.count + Format.blockLength
        let written = try output.withUnsafeMutableBytes { buffer in
          try chunk.withUnsafeBytes { try cipher.update($0, into: buffer.baseAddress!.advanced(by: start)) }
        }
        output.count = start + written
        try output.withUnsafeBytes { try hmac.update(UnsafeRawBufferPointer(rebasing: $0[start...])) }
        return output
      } catch {
        finished = true
        throw error
      }
    }

    /// Ends the message.
    ///
    /// - Returns: the last ciphertext block and the 32-byte HMAC (preceded by the header if
    ///   `update` was never called).
    /// - Throws: `.streamFinished` when called twice; `.libcrypto`.
    public func finalize() throws -> Data {
      try ensureActive()
      finished = true
      var output = takeHeader(reserving: Format.blockLength + Format.hmacLength)
      let start = output.count
      output.count += Format.blockLength + Format.hmacLength
      try output.withUnsafeMutableBytes { buffer in
        let base = buffer.baseAddress!
        guard let last = cipher.finish(into: base.advanced(by: start)) else {
          throw LibCrypto.failure("EVP_CipherFinal_ex")
        }
        try hmac.update(UnsafeRawBufferPointer(start: base.advanced(by: start), count: last))
        try hmac.finish(into: base.advanced(by: start + last))
        precondition(last == Format.blockLength, "RNCryptor: the final block is always whole")
      }
      return output
    }

    private func ensureActive() throws {
      if finished { throw Error.streamFinished }
    }

    private func takeHeader(reserving capacity: Int) -> Data {
      guard let header = pendingHeader else {
        var output = Data()
        output.reserveCapacity(capacity)
        return output
      }
      pendingHeader = nil
      var output = Data(capacity: header.count + capacity)
      output.append(header)
      return output
    }
  }
}

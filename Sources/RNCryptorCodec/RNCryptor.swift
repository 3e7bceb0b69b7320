import Foundation

/// The RNCryptor data format v3: AES-256-CBC with PKCS#7 padding, authenticated by
/// HMAC-SHA256 (encrypt-then-MAC), with keys given directly or derived from a password by
/// PBKDF2-HMAC-SHA1. Messages made here open in every RNCryptor v3 implementation, and the
/// reverse. See Docs/CODEC.md.
///
/// All functions are thread-safe.
public enum RNCryptor {
  // MARK: Password messages

  /// Encrypts `plaintext` into a password message with fresh random salts and IV.
  ///
  /// - Throws: `RNCryptor.Error.emptyPassword`, `.randomGeneratorFailed`, `.libcrypto`.
  /// - Complexity: two PBKDF2 runs (milliseconds) plus O(n). To encrypt many messages with one
  ///   password, derive `PasswordKeys` once and call `encrypt(_:passwordKeys:)`.
  public static func encrypt(_ plaintext: Data, password: String) throws -> Data {
    try encrypt(plaintext, passwordKeys: PasswordKeys(password: password))
  }

  /// Encrypts `plaintext` into a password message using keys derived earlier for a salt pair.
  /// The message carries those salts, so it decrypts with the password alone.
  ///
  /// - Throws: `.randomGeneratorFailed`, `.libcrypto`.
  /// - Complexity: O(n); no key derivation.
  public static func encrypt(_ plaintext: Data, passwordKeys: PasswordKeys) throws -> Data {
    try seal(plaintext, keys: passwordKeys.keys, salts: (passwordKeys.encryptionSalt, passwordKeys.hmacSalt))
  }

  /// Decrypts a password message.
  ///
  /// - Throws: `.authenticationFailed` for a wrong password or a modified message;
  ///   `.wrongCredentialType` for a key message; `.messageTooShort`, `.unknownVersion`,
  ///   `.unknownOptions` for malformed input; `.emptyPassword`.
  /// - Complexity: two PBKDF2 runs plus O(n). Use `PasswordKeyCache` for many messages.
  public static func decrypt(_ message: Data, password: String) throws -> Data {
    let salts = try passwordSalts(of: message)
    let keys = try Keys(password: password, encryptionSalt: salts.encryption, hmacSalt: salts.hmac)
    return try open(message, keys: keys, type: .password)
  }

  /// Decrypts a password message with keys already derived for its salts.
  ///
  /// - Throws: as `decrypt(_:password:)`, and `.authenticationFailed` when the keys are not the
  ///   ones for the message's salts.
  public static func decrypt(_ message: Data, passwordKeys: PasswordKeys) throws -> Data {
    _ = try passwordSalts(of: message)
    return try open(message, keys: passwordKeys.keys, type: .password)
  }

  // MARK: Key messages

  /// Encrypts `plaintext` into a key message (options 0, no salts) with a fresh random IV.
  ///
  /// - Throws: `.randomGeneratorFailed`, `.libcrypto`.
  /// - Complexity: O(n).
  public static func encrypt(_ plaintext: Data, keys: Keys) throws -> Data {
    try seal(plaintext, keys: keys, salts: nil)
  }

  /// Decrypts a key message.
  ///
  /// - Throws: `.authenticationFailed` for other keys or a modified message;
  ///   `.wrongCredentialType` for a password message; `.messageTooShort`, `.unknownVersion`,
  ///   `.unknownOptions` for malformed input.
  /// - Complexity: O(n).
  public static func decrypt(_ message: Data, keys: Keys) throws -> Data {
    guard try Format.credentialType(of: message) == .keys else {
      throw Error.wrongCredentialType(message: .password)
    }
    return try open(message, keys: keys, type: .keys)
  }

  // MARK: Shared machinery

  /// The two salts of a password message.
  ///
  /// - Throws: `.wrongCredentialType` for a key message, and the header errors.
  public static func passwordSalts(of message: Data) throws -> (encryption: Data, hmac: Data) {
    guard try Format.credentialType(of: message) == .password else {
      throw Error.wrongCredentialType(message: .keys)
    }
    try checkLength(of: message, type: .password)
    return salts(fromHeader: message)
  }

  /// The salts of a password header of at least `Format.passwordHeaderLength` bytes.
  static func salts(fromHeader message: Data) -> (encryption: Data, hmac: Data) {
    let start = message.startIndex + 2
    let encryption = Data(message[start..<start + Format.saltLength])
    let hmac = Data(message[start + Format.saltLength..<start + 2 * Format.saltLength])
    return (encryption, hmac)
  }

  /// Builds a message. `iv` is for the official test vectors only; everything else gets a
  /// random IV. `secret`: the plaintext is a secret, so the cipher context, which keeps its
  /// last block, is freed (and wiped) instead of going back to the key's pool.
  package static func seal(
    _ plaintext: Data, keys: Keys, salts: (encryption: Data, hmac: Data)?, iv: Data? = nil, secret: Bool = false
  ) throws -> Data {
    let type: CredentialType = salts == nil ? .keys : .password
    let headerLength = Format.headerLength(type)
    let total = Format.messageLength(plaintextLength: plaintext.count, type: type)
    var message = Data(count: total)
    try message.withUnsafeMutableBytes { (output) throws in
      guard let base = output.baseAddress else { throw Error.libcrypto(function: "allocate", code: 0) }
      output[0] = Format.version
      output[1] = type == .password ? Format.passwordOptions : Format.keyOptions
      var cursor = 2
      if let salts {
        for salt in [salts.encryption, salts.hmac] {
          guard salt.count == Format.saltLength else { throw Error.invalidSaltLength(salt.count) }
          salt.copyBytes(to: base.advanced(by: cursor).assumingMemoryBound(to: UInt8.self), count: salt.count)
          cursor += salt.count
        }
      }
      let ivBuffer = UnsafeMutableRawBufferPointer(rebasing: output[cursor..<cursor + Format.ivLength])
      if let iv {
        guard iv.count == Format.ivLength else { throw Error.messageTooShort(length: iv.count, minimum: 16) }
        _ = iv.copyBytes(to: ivBuffer.bindMemory(to: UInt8.self))
      } else {
        try LibCrypto.randomIV(ivBuffer)
      }
      let length: Int
      if iv == nil && !secret {
        length = try plaintext.withUnsafeBytes { (input) throws in
          try keys.cipher.sealChained(
            ivSlot: ivBuffer.baseAddress!, prefix: input, body: UnsafeRawBufferPointer(start: nil, count: 0))
        }
      } else {
        // A given IV (the test vectors), or a secret, which must not stay in a pooled context.
        length = try keys.cipher.withPass(iv: UnsafeRawBufferPointer(ivBuffer), encrypt: true, secret: secret) {
          (cipher) throws in
          let length = try plaintext.withUnsafeBytes { (input) throws in
            try cipher.update(input, into: base.advanced(by: headerLength))
          }
          guard let last = cipher.finish(into: base.advanced(by: headerLength + length)) else {
            throw LibCrypto.failure("EVP_CipherFinal_ex")
          }
          return length + last
        }
      }
      let authenticated = headerLength + length
      precondition(authenticated + Format.hmacLength == total, "RNCryptor: ciphertext length mismatch")
      try keys.hmac.authenticate(
        UnsafeRawBufferPointer(rebasing: output[0..<authenticated]), into: base.advanced(by: authenticated))
    }
    return message
  }

  /// Checks that a message is long enough for its type and holds whole cipher blocks, before
  /// any key derivation is spent on it.
  static func checkLength(of message: Data, type: CredentialType) throws {
    let minimum = Format.minimumLength(type)
    guard message.count >= minimum,
      (message.count - Format.headerLength(type) - Format.hmacLength) % Format.blockLength == 0
    else { throw Error.messageTooShort(length: message.count, minimum: minimum) }
  }

  /// Authenticates, then decrypts a message whose type the caller has checked. The plaintext
  /// is only in the returned `Data`: no cipher context keeps a block of it.
  static func open(_ message: Data, keys: Keys, type: CredentialType) throws -> Data {
    let headerLength = Format.headerLength(type)
    try checkLength(of: message, type: type)
    let ciphertextLength = message.count - headerLength - Format.hmacLength
    var plaintext = Data(count: ciphertextLength)
    let plaintextLength = try message.withUnsafeBytes { (input) throws -> Int in
      let authenticated = input.count - Format.hmacLength
      try verifyHMAC(
        of: UnsafeRawBufferPointer(rebasing: input[0..<authenticated]),
        expected: UnsafeRawBufferPointer(rebasing: input[authenticated...]), key: keys.hmac)
      let iv = UnsafeRawBufferPointer(rebasing: input[headerLength - Format.ivLength..<headerLength])
      return try plaintext.withUnsafeMutableBytes { (output) throws -> Int in
        guard let base = output.baseAddress else { throw Error.libcrypto(function: "allocate", code: 0) }
        guard
          let length = try keys.cipher.decryptMessage(
            iv: iv, UnsafeRawBufferPointer(rebasing: input[headerLength..<authenticated]), into: base)
        else { throw Error.badPadding }
        return length
      }
    }
    // Shortening in place; `removeLast` goes through the general range replacement.
    plaintext.count = plaintextLength
    return plaintext
  }

  /// Computes the HMAC of `bytes` and compares it in constant time with `expected`.
  static func verifyHMAC(of bytes: UnsafeRawBufferPointer, expected: UnsafeRawBufferPointer, key: HMACKey)
    throws
  {
    let equal = try withUnsafeTemporaryAllocation(byteCount: Format.hmacLength, alignment: 8) { (computed) throws in
      try key.authenticate(bytes, into: computed.baseAddress!)
      return constantTimeEqual(UnsafeRawBufferPointer(computed), expected)
    }
    guard equal else { throw Error.authenticationFailed }
  }
}

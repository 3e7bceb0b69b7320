import Foundation

extension RNCryptor {
  /// Seals a key message whose plaintext is `prefix` followed by `body`, straight into
  /// `output`, which must be exactly `Format.messageLength(plaintextLength: prefix.count +
  /// body.count, type: .keys)` bytes. The plaintext is never assembled in one buffer.
  ///
  /// For the storage engine, which writes each message into its record without a copy.
  ///
  /// - Throws: `.randomGeneratorFailed`, `.libcrypto`.
  /// - Complexity: O(n).
  package static func seal(
    prefix: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer, keys: Keys, into output: UnsafeMutableRawBufferPointer
  ) throws {
    let headerLength = Format.keyHeaderLength
    let plaintextLength = prefix.count + body.count
    guard let base = output.baseAddress,
      output.count == Format.messageLength(plaintextLength: plaintextLength, type: .keys)
    else { throw Error.libcrypto(function: "seal: output length", code: 0) }
    output[0] = Format.version
    output[1] = Format.keyOptions
    let ivBuffer = UnsafeMutableRawBufferPointer(rebasing: output[2..<headerLength])
    try LibCrypto.randomIV(ivBuffer)
    let length = try keys.cipher.sealChained(ivSlot: ivBuffer.baseAddress!, prefix: prefix, body: body)
    let authenticated = headerLength + length
    precondition(authenticated + Format.hmacLength == output.count, "RNCryptor: ciphertext length mismatch")
    try keys.hmac.authenticate(
      UnsafeRawBufferPointer(rebasing: output[0..<authenticated]), into: base.advanced(by: authenticated))
  }

  /// Authenticates and decrypts a key message into `output`, which must hold at least the
  /// message's ciphertext length (`message.count - Format.keyHeaderLength - Format.hmacLength`).
  /// Nothing is written to `output` unless the message authenticates.
  ///
  /// For the storage engine, which reads records into buffers it reuses.
  ///
  /// - Returns: the plaintext's length.
  /// - Throws: as `decrypt(_:keys:)`.
  /// - Complexity: O(n).
  package static func open(
    _ message: UnsafeRawBufferPointer, keys: Keys, into output: UnsafeMutableRawBufferPointer
  ) throws -> Int {
    guard try Format.credentialType(of: message) == .keys else {
      throw Error.wrongCredentialType(message: .password)
    }
    let minimum = Format.minimumLength(.keys)
    let headerLength = Format.keyHeaderLength
    guard message.count >= minimum, (message.count - headerLength - Format.hmacLength) % Format.blockLength == 0
    else { throw Error.messageTooShort(length: message.count, minimum: minimum) }
    let authenticated = message.count - Format.hmacLength
    guard let base = output.baseAddress, output.count >= authenticated - headerLength else {
      throw Error.libcrypto(function: "open: output length", code: 0)
    }
    try verifyHMAC(
      of: UnsafeRawBufferPointer(rebasing: message[0..<authenticated]),
      expected: UnsafeRawBufferPointer(rebasing: message[authenticated...]), key: keys.hmac)
    let iv = UnsafeRawBufferPointer(rebasing: message[headerLength - Format.ivLength..<headerLength])
    guard
      let length = try keys.cipher.decryptMessage(
        iv: iv, UnsafeRawBufferPointer(rebasing: message[headerLength..<authenticated]), into: base)
    else { throw Error.badPadding }
    return length
  }

  /// Decrypts the first `output.count` bytes (a multiple of 16) of a key message's plaintext
  /// **without authenticating anything**: the bytes may be forged. Only for a guess that costs
  /// nothing when wrong (the engine sizes its index from the entry counts of its hints, then
  /// authenticates each hint before using any entry).
  ///
  /// `message` may be just the start of a message: its header and the blocks to decrypt.
  ///
  /// - Returns: `false` when `message` is too short to hold that many ciphertext bytes.
  /// - Throws: `.libcrypto`.
  package static func unauthenticatedPrefix(
    of message: UnsafeRawBufferPointer, keys: Keys, into output: UnsafeMutableRawBufferPointer
  ) throws -> Bool {
    let headerLength = Format.keyHeaderLength
    guard let base = output.baseAddress, output.count % Format.blockLength == 0,
      message.count >= headerLength + output.count
    else { return false }
    try keys.cipher.decryptBlocks(
      iv: UnsafeRawBufferPointer(rebasing: message[headerLength - Format.ivLength..<headerLength]),
      UnsafeRawBufferPointer(rebasing: message[headerLength..<headerLength + output.count]), into: base)
    return true
  }
}

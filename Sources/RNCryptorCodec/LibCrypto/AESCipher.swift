internal import CLibCrypto
import Foundation

/// An AES-256 key with its expanded key schedules, ready to encrypt or decrypt messages.
///
/// Each direction keeps a pool of contexts already initialised with the key; a message only
/// sets its IV, which skips the key expansion.
final class CipherKey: Sendable {
  let key: SecureBytes
  fileprivate let encryptors = ContextPool(release: { EVP_CIPHER_CTX_free($0) })
  fileprivate let decryptors = ContextPool(release: { EVP_CIPHER_CTX_free($0) })
  /// AES-256-CBC encryption contexts without padding, keyed once and never given an IV again:
  /// each message continues from the last block the context wrote (see `sealChained`).
  private let chainedEncryptors = ContextPool(release: { EVP_CIPHER_CTX_free($0) })
  /// AES-256-ECB decryption contexts without padding, keyed once and never given an IV.
  private let blockDecryptors = ContextPool(release: { EVP_CIPHER_CTX_free($0) })

  init(key: SecureBytes) {
    self.key = key
  }

  /// A context for one message with `iv`.
  func start(iv: UnsafeRawBufferPointer, encrypt: Bool) throws -> CipherContext {
    let pool = encrypt ? encryptors : decryptors
    return CipherContext(context: try prepare(iv: iv, encrypt: encrypt), pool: pool)
  }

  /// Runs `body` with a pooled context set up for one whole message with `iv`, then gives the
  /// context back (or frees it, which wipes it, when `secret`: it keeps the last block of
  /// plaintext). No object per message, for the one-shot paths.
  func withPass<Result>(
    iv: UnsafeRawBufferPointer, encrypt: Bool, secret: Bool = false, _ body: (CipherPass) throws -> Result
  ) throws -> Result {
    let context = try prepare(iv: iv, encrypt: encrypt)
    defer {
      if secret { EVP_CIPHER_CTX_free(context) } else { (encrypt ? encryptors : decryptors).give(context) }
    }
    return try body(CipherPass(context: context))
  }

  /// An idle context of the direction's pool (or a new one, keyed) with its IV set.
  private func prepare(iv: UnsafeRawBufferPointer, encrypt: Bool) throws -> OpaquePointer {
    let pool = encrypt ? encryptors : decryptors
    let ivPointer = iv.baseAddress?.assumingMemoryBound(to: UInt8.self)
    if let context = pool.take() {
      guard EVP_CipherInit_ex2(context, nil, nil, ivPointer, encrypt ? 1 : 0, nil) == 1 else {
        EVP_CIPHER_CTX_free(context)
        throw LibCrypto.failure("EVP_CipherInit_ex2")
      }
      return context
    }
    let algorithm = try LibCrypto.algorithms().aes256CBC
    guard let context = EVP_CIPHER_CTX_new() else { throw LibCrypto.failure("EVP_CIPHER_CTX_new") }
    let status = key.withUnsafeBytes { keyBytes in
      EVP_CipherInit_ex2(
        context, algorithm, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), ivPointer, encrypt ? 1 : 0,
        nil)
    }
    guard status == 1 else {
      EVP_CIPHER_CTX_free(context)
      throw LibCrypto.failure("EVP_CipherInit_ex2")
    }
    return context
  }
}

extension CipherKey {
  /// Decrypts whole blocks of a CBC ciphertext that starts after `iv`, without padding:
  /// `input` and `output` are the same length, a multiple of 16, and do not overlap.
  func decryptBlocks(iv: UnsafeRawBufferPointer, _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer)
    throws
  {
    precondition(input.count % 16 == 0 && iv.count == 16, "CipherKey: whole blocks and a 16-byte IV")
    guard input.count > 0 else { return }
    // Each CBC plaintext block is the block cipher's decryption of its ciphertext block XOR the
    // ciphertext block before it (the IV for the first). So the blocks go through ECB in one
    // call and are chained here. Prevents: a CBC context needing its IV set per message,
    // which in OpenSSL 3.0 looks the IV length up by name through OSSL_PARAM (about a tenth
    // of a small message's cost). ECB without padding keeps nothing between calls.
    let context = try blockDecryptor()
    defer { blockDecryptors.give(context) }
    guard try CipherPass(context: context).update(input, into: output) == input.count else {
      throw LibCrypto.failure("EVP_CipherUpdate")
    }
    let inputBase = input.baseAddress!
    let ivBase = iv.baseAddress!
    var offset = 0
    while offset < input.count {
      let chain = offset == 0 ? ivBase : inputBase + (offset - 16)
      let low = output.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ chain.loadUnaligned(as: UInt64.self)
      let high =
        output.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
        ^ chain.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
      output.storeBytes(of: low, toByteOffset: offset, as: UInt64.self)
      output.storeBytes(of: high, toByteOffset: offset + 8, as: UInt64.self)
      offset += 16
    }
  }

  /// Decrypts a whole CBC ciphertext with PKCS#7 padding that starts after `iv` into `output`
  /// (at least `input.count` bytes, not overlapping it), for a message already authenticated.
  ///
  /// - Returns: the plaintext's length, or `nil` when the padding is malformed.
  func decryptMessage(iv: UnsafeRawBufferPointer, _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer)
    throws -> Int?
  {
    guard input.count >= 16 else { return nil }
    try decryptBlocks(iv: iv, input, into: output)
    let padding = Int(output.load(fromByteOffset: input.count - 1, as: UInt8.self))
    guard (1...16).contains(padding) else { return nil }
    for index in input.count - padding..<input.count - 1
    where output.load(fromByteOffset: index, as: UInt8.self) != UInt8(padding) {
      return nil
    }
    return input.count - padding
  }

  /// Encrypts `prefix` then `body` as one CBC message with PKCS#7 padding whose IV the
  /// context makes itself. On entry the 16 bytes at `ivSlot` are fresh random bytes; on return
  /// they are the message's IV, and the ciphertext follows them (from `ivSlot + 16`, room for
  /// `prefix.count + body.count + 16` bytes), as in an RNCryptor message.
  ///
  /// The context is never given an IV: it encrypts the random block first, which turns it into
  /// E(random XOR the last block it wrote), and a CBC context that has just written a block
  /// continues exactly as a fresh one whose IV is that block. Random input through a block
  /// cipher is as unpredictable as a random IV. Prevents: a CBC context's IV set-up per
  /// message, which in OpenSSL 3.0 looks the IV length up by name (two per record). Not for
  /// secrets: the context's block buffer keeps the last partial block of plaintext.
  ///
  /// - Returns: the ciphertext's length (a multiple of 16, padding included).
  func sealChained(ivSlot: UnsafeMutableRawPointer, prefix: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer)
    throws -> Int
  {
    let context = try chainedEncryptor()
    var reusable = false
    defer { if reusable { chainedEncryptors.give(context) } else { EVP_CIPHER_CTX_free(context) } }
    let pass = CipherPass(context: context)
    guard try pass.update(UnsafeRawBufferPointer(start: UnsafeRawPointer(ivSlot), count: 16), into: ivSlot) == 16 else {
      throw LibCrypto.failure("EVP_CipherUpdate")
    }
    let output = ivSlot + 16
    var written = try pass.update(prefix, into: output)
    written += try pass.update(body, into: output + written)
    let padding = 16 - (prefix.count + body.count) % 16
    let tail = output + written
    written += try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { block in
      block.initialize(repeating: UInt8(padding))
      return try pass.update(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: block[0..<padding])), into: tail)
    }
    guard written == prefix.count + body.count + padding else { throw LibCrypto.failure("EVP_CipherUpdate") }
    reusable = true
    return written
  }

  /// An idle chained encryption context, or a new one keyed with padding off.
  private func chainedEncryptor() throws -> OpaquePointer {
    if let context = chainedEncryptors.take() { return context }
    return try newContext(try LibCrypto.algorithms().aes256CBC, encrypt: true)
  }

  /// An idle ECB decryption context, or a new one keyed with padding off.
  private func blockDecryptor() throws -> OpaquePointer {
    if let context = blockDecryptors.take() { return context }
    return try newContext(try LibCrypto.algorithms().aes256ECB, encrypt: false)
  }

  /// A new context of `algorithm` keyed with this key, with padding off. A CBC one starts from
  /// an all-zero chaining block, which `sealChained` never uses as an IV.
  private func newContext(_ algorithm: OpaquePointer, encrypt: Bool) throws -> OpaquePointer {
    guard let context = EVP_CIPHER_CTX_new() else { throw LibCrypto.failure("EVP_CIPHER_CTX_new") }
    let zero = [UInt8](repeating: 0, count: 16)
    let status = key.withUnsafeBytes { keyBytes in
      EVP_CipherInit_ex2(
        context, algorithm, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), zero, encrypt ? 1 : 0, nil)
    }
    guard status == 1, EVP_CIPHER_CTX_set_padding(context, 0) == 1 else {
      EVP_CIPHER_CTX_free(context)
      throw LibCrypto.failure("EVP_CipherInit_ex2")
    }
    return context
  }
}

/// An AES-256-CBC context with PKCS#7 padding, encrypting or decrypting one message, for the
/// streaming paths. It goes back to its key's pool when released.
final class CipherContext {
  private let pass: CipherPass
  private let pool: ContextPool
  /// Set for a message whose plaintext is a secret: the context keeps the last block's
  /// plaintext in its block buffer after `finish`, so it is freed (libcrypto wipes it) instead
  /// of going back to the pool.
  var holdsSecret = false

  fileprivate init(context: OpaquePointer, pool: ContextPool) {
    self.pass = CipherPass(context: context)
    self.pool = pool
  }

  deinit {
    if holdsSecret {
      EVP_CIPHER_CTX_free(pass.context)
    } else {
      pool.give(pass.context)
    }
  }

  /// Turns PKCS#7 padding off (whole blocks in, the same blocks out) or back on.
  func setPadding(_ on: Bool) { pass.setPadding(on) }

  /// Processes `input` into `output`, which must have room for `input.count + 16` bytes.
  /// - Returns: the number of bytes written.
  func update(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws -> Int {
    try pass.update(input, into: output)
  }

  /// Writes the last block (encryption: padding; decryption: checks and strips it).
  /// - Returns: the number of bytes written, or `nil` when decryption found bad padding.
  func finish(into output: UnsafeMutableRawPointer) -> Int? { pass.finish(into: output) }
}

/// The calls on one context during one message; its owner (`CipherContext` or
/// `CipherKey.withPass`) decides where the context goes afterwards.
struct CipherPass {
  fileprivate let context: OpaquePointer

  /// Turns PKCS#7 padding off (whole blocks in, the same blocks out) or back on.
  func setPadding(_ on: Bool) {
    EVP_CIPHER_CTX_set_padding(context, on ? 1 : 0)
  }

  /// Processes `input` into `output`, which must have room for `input.count + 16` bytes.
  /// - Returns: the number of bytes written.
  func update(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws -> Int {
    guard let base = input.baseAddress, input.count > 0 else { return 0 }
    var written: Int32 = 0
    // OpenSSL takes an int length: feed large inputs in pieces.
    var offset = 0
    var total = 0
    while offset < input.count {
      let length = Swift.min(input.count - offset, 1 << 30)
      let status = EVP_CipherUpdate(
        context, output.advanced(by: total).assumingMemoryBound(to: UInt8.self), &written,
        base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(length))
      guard status == 1 else { throw LibCrypto.failure("EVP_CipherUpdate") }
      offset += length
      total += Int(written)
    }
    return total
  }

  /// Writes the last block (encryption: padding; decryption: checks and strips it).
  /// - Returns: the number of bytes written, or `nil` when decryption found bad padding.
  func finish(into output: UnsafeMutableRawPointer) -> Int? {
    var written: Int32 = 0
    let status = EVP_CipherFinal_ex(context, output.assumingMemoryBound(to: UInt8.self), &written)
    guard status == 1 else {
      ERR_clear_error()
      return nil
    }
    return Int(written)
  }
}

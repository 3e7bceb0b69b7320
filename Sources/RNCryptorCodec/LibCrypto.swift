internal import CLibCrypto
import Foundation
import Synchronization

/// Thin, internal wrappers over the libcrypto calls the codec makes. Nothing here is public:
/// no OpenSSL type or pointer leaves this module.
enum LibCrypto {
  /// Algorithms fetched once per process (OpenSSL 3 fetches are costly).
  final class Algorithms: @unchecked Sendable {
    let aes256CBC: OpaquePointer

    init?() {
      guard let aes = EVP_CIPHER_fetch(nil, "AES-256-CBC", nil) else { return nil }
      self.aes256CBC = aes
    }
  }

  static let shared = Algorithms()

  static func algorithms() throws -> Algorithms {
    guard let shared else { throw failure("EVP_*_fetch") }
    return shared
  }

  /// The error for a failed call, with OpenSSL's code; clears OpenSSL's error queue of this thread.
  static func failure(_ function: String) -> RNCryptor.Error {
    let code = ERR_get_error()
    ERR_clear_error()
    return .libcrypto(function: function, code: UInt(code))
  }

  /// Fills `buffer` from OpenSSL's CSPRNG.
  static func randomBytes(_ buffer: UnsafeMutableRawBufferPointer) throws {
    guard buffer.count > 0 else { return }
    guard let base = buffer.baseAddress,
      RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1
    else {
      ERR_clear_error()
      throw RNCryptor.Error.randomGeneratorFailed
    }
  }

  /// Fills a 16-byte IV from a buffer of CSPRNG output refilled 4 KiB at a time, which
  /// spares a `RAND_bytes` call per message. IVs are public once used; the buffer only ever
  /// holds IVs not yet handed out, and a forked child refills before using it.
  static func randomIV(_ buffer: UnsafeMutableRawBufferPointer) throws {
    try ivPool.fill(buffer)
  }

  private static let ivPool = RandomPool()

  /// `count` fresh random bytes.
  static func randomData(count: Int) throws -> Data {
    var data = Data(count: count)
    try data.withUnsafeMutableBytes { (buffer) throws in try randomBytes(buffer) }
    return data
  }

  /// PBKDF2-HMAC-SHA1 with RNCryptor v3's parameters into a wiping buffer.
  static func deriveKey(password: SecureBytes, salt: UnsafeRawBufferPointer) throws
    -> SecureBytes
  {
    try SecureBytes(count: RNCryptor.Format.keyLength) { (output) throws in
      try password.withUnsafeBytes { passwordBytes in
        try pbkdf2SHA1(
          password: passwordBytes, salt: salt, iterations: RNCryptor.Format.pbkdf2Iterations, into: output)
      }
    }
  }

  /// PBKDF2 with HMAC-SHA1 (RFC 8018, section 5.2), filling `output`.
  ///
  /// Why not `PKCS5_PBKDF2_HMAC`: in OpenSSL 3 every one of its iterations goes through the
  /// provider layer and copies HMAC contexts, which took about 7–11 ms per key here, three
  /// times the hashing itself, and far more under AddressSanitizer (each copy allocates).
  /// Here the SHA-1 states after the HMAC key's padded blocks (`K ^ ipad`, `K ^ opad`) are
  /// computed once. Every message after the first of each output block is the 20-byte U of
  /// the iteration before, so its hash under either state is exactly one compression of a
  /// block known in advance but for those 20 bytes (U, the 0x80 byte, zeros, and the bit
  /// length 84 × 8): each iteration is two `SHA1_Transform` calls on a copy of a state's five
  /// words, nothing else. Checked against RFC 6070's vectors and `PKCS5_PBKDF2_HMAC` by the
  /// tests.
  ///
  /// The padded key, the three SHA-1 states, the last U and the last block of T are in memory
  /// this function allocates and wipes before returning; the running XOR itself lives in five
  /// local words (registers, or stack the compiler may reuse), which Swift cannot wipe
  /// reliably.
  static func pbkdf2SHA1(
    password: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, iterations: Int,
    into output: UnsafeMutableRawBufferPointer
  ) throws {
    precondition(iterations >= 1, "PBKDF2 needs at least one iteration")
    let blockLength = 64
    let digestLength = 20
    // Scratch, wiped at the end: the padded key block, then the block hashed by each
    // iteration (U, then its padding).
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * blockLength, alignment: 8)
    let states = UnsafeMutablePointer<SHA_CTX>.allocate(capacity: 3)
    states.initialize(repeating: SHA_CTX(), count: 3)
    defer {
      cleanse(scratch)
      scratch.deallocate()
      cleanse(UnsafeMutableRawBufferPointer(start: states, count: 3 * MemoryLayout<SHA_CTX>.size))
      states.deallocate()
    }
    let key = scratch.baseAddress!
    let message = key + blockLength
    let inner = states
    let outer = states + 1
    let work = states + 2

    // The HMAC key block: the password, or its SHA-1 if it is longer than a block, zero-padded.
    key.initializeMemory(as: UInt8.self, repeating: 0, count: blockLength)
    if password.count > blockLength {
      guard SHA1(password.baseAddress!.assumingMemoryBound(to: UInt8.self), password.count, key) != nil else {
        throw failure("SHA1")
      }
    } else if let base = password.baseAddress, password.count > 0 {
      key.copyMemory(from: base, byteCount: password.count)
    }
    let keyBytes = key.assumingMemoryBound(to: UInt8.self)
    for (state, pad) in [(inner, UInt8(0x36)), (outer, UInt8(0x5C))] {
      for index in 0..<blockLength { keyBytes[index] ^= pad }
      guard SHA1_Init(state) == 1, SHA1_Update(state, key, blockLength) == 1 else { throw failure("SHA1_Init") }
      for index in 0..<blockLength { keyBytes[index] ^= pad }
    }

    // The block of every later message: U (20 bytes), 0x80, zeros, then the bit length of
    // everything hashed under the state (the 64-byte key block and U), big-endian.
    message.initializeMemory(as: UInt8.self, repeating: 0, count: blockLength)
    message.storeBytes(of: 0x80, toByteOffset: digestLength, as: UInt8.self)
    message.storeBytes(
      of: UInt64((blockLength + digestLength) * 8).bigEndian, toByteOffset: blockLength - 8, as: UInt64.self)
    let messageBytes = message.assumingMemoryBound(to: UInt8.self)

    /// Hashes `message` under `state`'s words, leaving the digest as U in `message`.
    func compress(from state: UnsafeMutablePointer<SHA_CTX>) {
      work.pointee.h0 = state.pointee.h0
      work.pointee.h1 = state.pointee.h1
      work.pointee.h2 = state.pointee.h2
      work.pointee.h3 = state.pointee.h3
      work.pointee.h4 = state.pointee.h4
      SHA1_Transform(work, messageBytes)
      message.storeBytes(of: work.pointee.h0.bigEndian, toByteOffset: 0, as: UInt32.self)
      message.storeBytes(of: work.pointee.h1.bigEndian, toByteOffset: 4, as: UInt32.self)
      message.storeBytes(of: work.pointee.h2.bigEndian, toByteOffset: 8, as: UInt32.self)
      message.storeBytes(of: work.pointee.h3.bigEndian, toByteOffset: 12, as: UInt32.self)
      message.storeBytes(of: work.pointee.h4.bigEndian, toByteOffset: 16, as: UInt32.self)
    }

    var produced = 0
    var blockIndex: UInt32 = 1
    while produced < output.count {
      // U1 = HMAC(key, salt || INT(blockIndex)), through the ordinary calls.
      work.pointee = inner.pointee
      var index = blockIndex.bigEndian
      guard SHA1_Update(work, salt.baseAddress, salt.count) == 1, SHA1_Update(work, &index, 4) == 1,
        SHA1_Final(messageBytes, work) == 1
      else { throw failure("SHA1_Update") }
      work.pointee = outer.pointee
      guard SHA1_Update(work, message, digestLength) == 1, SHA1_Final(messageBytes, work) == 1 else {
        throw failure("SHA1_Final")
      }
      // SHA1_Final wrote only the 20 digest bytes; the padding after them is untouched.
      // T, the XOR of every U, as five words of U's big-endian bytes.
      var t0 = message.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
      var t1 = message.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
      var t2 = message.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
      var t3 = message.loadUnaligned(fromByteOffset: 12, as: UInt32.self)
      var t4 = message.loadUnaligned(fromByteOffset: 16, as: UInt32.self)
      for _ in 1..<iterations {
        compress(from: inner)
        compress(from: outer)
        t0 ^= message.loadUnaligned(fromByteOffset: 0, as: UInt32.self)
        t1 ^= message.loadUnaligned(fromByteOffset: 4, as: UInt32.self)
        t2 ^= message.loadUnaligned(fromByteOffset: 8, as: UInt32.self)
        t3 ^= message.loadUnaligned(fromByteOffset: 12, as: UInt32.self)
        t4 ^= message.loadUnaligned(fromByteOffset: 16, as: UInt32.self)
      }
      // T goes through the message buffer (wiped at the end), not an array: the words are
      // stored back in the byte order they were loaded in.
      message.storeBytes(of: t0, toByteOffset: 0, as: UInt32.self)
      message.storeBytes(of: t1, toByteOffset: 4, as: UInt32.self)
      message.storeBytes(of: t2, toByteOffset: 8, as: UInt32.self)
      message.storeBytes(of: t3, toByteOffset: 12, as: UInt32.self)
      message.storeBytes(of: t4, toByteOffset: 16, as: UInt32.self)
      let count = min(digestLength, output.count - produced)
      output.baseAddress!.advanced(by: produced).copyMemory(from: message, byteCount: count)
      produced += count
      blockIndex += 1
    }
  }

  /// Wipes `count` bytes at `pointer` in a way the optimiser keeps.
  static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress else { return }
    OPENSSL_cleanse(base, buffer.count)
  }
}

/// A few idle libcrypto contexts kept for reuse, so that encrypting a small message does not
/// allocate, key and free a context each time. Contexts are handed out to one user at a time.
final class ContextPool: @unchecked Sendable {
  private let lock = NSLock()
  private var idle: [OpaquePointer] = []
  private let capacity: Int
  private let release: (OpaquePointer) -> Void

  init(capacity: Int = 8, release: @escaping (OpaquePointer) -> Void) {
    self.capacity = capacity
    self.release = release
  }

  deinit {
    for context in idle { release(context) }
  }

  /// An idle context, or `nil` if none is left.
  func take() -> OpaquePointer? {
    lock.lock()
    defer { lock.unlock() }
    return idle.popLast()
  }

  /// Returns a context for reuse (or frees it when the pool is full).
  func give(_ context: OpaquePointer) {
    lock.lock()
    if idle.count < capacity {
      idle.append(context)
      lock.unlock()
    } else {
      lock.unlock()
      release(context)
    }
  }
}

/// An AES-256 key with its expanded key schedules, ready to encrypt or decrypt messages.
///
/// Each direction keeps a pool of contexts already initialised with the key; a message only
/// sets its IV, which skips the key expansion.
final class CipherKey: Sendable {
  let key: SecureBytes
  fileprivate let encryptors = ContextPool(release: { EVP_CIPHER_CTX_free($0) })
  fileprivate let decryptors = ContextPool(release: { EVP_CIPHER_CTX_free($0) })

  init(key: SecureBytes) {
    self.key = key
  }

  /// A context for one message with `iv`.
  func start(iv: UnsafeRawBufferPointer, encrypt: Bool) throws -> CipherContext {
    let pool = encrypt ? encryptors : decryptors
    let ivPointer = iv.baseAddress?.assumingMemoryBound(to: UInt8.self)
    if let context = pool.take() {
      guard EVP_CipherInit_ex2(context, nil, nil, ivPointer, encrypt ? 1 : 0, nil) == 1 else {
        EVP_CIPHER_CTX_free(context)
        throw LibCrypto.failure("EVP_CipherInit_ex2")
      }
      return CipherContext(context: context, pool: pool)
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
    return CipherContext(context: context, pool: pool)
  }
}

extension CipherKey {
  /// Decrypts whole blocks of a CBC ciphertext that starts after `iv`, without padding:
  /// `input` and `output` are the same length, a multiple of 16.
  func decryptBlocks(iv: UnsafeRawBufferPointer, _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer)
    throws
  {
    let context = try start(iv: iv, encrypt: false)
    context.setPadding(false)
    defer { context.setPadding(true) }  // as the pool's contexts expect
    guard try context.update(input, into: output) == input.count else { throw LibCrypto.failure("EVP_CipherUpdate") }
  }
}

/// An AES-256-CBC context with PKCS#7 padding, encrypting or decrypting one message. It goes
/// back to its key's pool when released.
final class CipherContext {
  private let context: OpaquePointer
  private let pool: ContextPool
  /// Set for a message whose plaintext is a secret: the context keeps the last block's
  /// plaintext in its block buffer after `finish`, so it is freed (libcrypto wipes it) instead
  /// of going back to the pool.
  var holdsSecret = false

  fileprivate init(context: OpaquePointer, pool: ContextPool) {
    self.context = context
    self.pool = pool
  }

  deinit {
    if holdsSecret {
      EVP_CIPHER_CTX_free(context)
    } else {
      pool.give(context)
    }
  }

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

/// An HMAC-SHA256 key, kept as the two SHA-256 states after its padded key blocks (RFC 2104:
/// `K ^ ipad` and `K ^ opad`), computed once. A message copies the inner state, hashes, then
/// finishes with a copy of the outer one: no allocation inside libcrypto, no context pool.
///
/// The states are as secret as the key itself; they are wiped when the key goes.
final class HMACKey: @unchecked Sendable {
  // Never changed after init; only copied.
  private let states: UnsafeMutablePointer<SHA256_CTX>

  init(key: SecureBytes) throws {
    states = .allocate(capacity: 2)
    states.initialize(repeating: SHA256_CTX(), count: 2)
    var block = [UInt8](repeating: 0, count: 64)
    defer { block.withUnsafeMutableBytes { LibCrypto.cleanse($0) } }
    // RNCryptor keys are 32 bytes, never longer than SHA-256's 64-byte block: no hashing first.
    precondition(key.count <= 64, "HMACKey: key longer than a block")
    for (index, pad) in [UInt8(0x36), 0x5C].enumerated() {
      key.withUnsafeBytes { keyBytes in
        for position in 0..<64 { block[position] = (position < keyBytes.count ? keyBytes[position] : 0) ^ pad }
      }
      guard SHA256_Init(states + index) == 1, SHA256_Update(states + index, block, 64) == 1 else {
        throw LibCrypto.failure("SHA256_Init")
      }
    }
  }

  deinit {
    LibCrypto.cleanse(UnsafeMutableRawBufferPointer(start: states, count: 2 * MemoryLayout<SHA256_CTX>.size))
    states.deallocate()
  }

  /// A fresh running HMAC for one message.
  func start() throws -> HMACContext {
    HMACContext(key: self)
  }

  fileprivate var inner: SHA256_CTX { states[0] }
  fileprivate var outer: SHA256_CTX { states[1] }
}

/// A running HMAC-SHA256 over one message.
final class HMACContext {
  private var state: SHA256_CTX
  /// Kept for its outer state, read at the end (a stream may outlive every other holder of it).
  private let key: HMACKey

  fileprivate init(key: HMACKey) {
    self.state = key.inner
    self.key = key
  }

  deinit {
    withUnsafeMutableBytes(of: &state) { LibCrypto.cleanse($0) }
  }

  func update(_ bytes: UnsafeRawBufferPointer) throws {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return }
    guard SHA256_Update(&state, base, bytes.count) == 1 else { throw LibCrypto.failure("SHA256_Update") }
  }

  /// Writes the 32-byte MAC to `output`.
  func finish(into output: UnsafeMutableRawPointer) throws {
    let digest = output.assumingMemoryBound(to: UInt8.self)
    // The inner digest goes to `output` first, then is hashed under the outer state.
    guard SHA256_Final(digest, &state) == 1 else { throw LibCrypto.failure("SHA256_Final") }
    state = key.outer
    guard SHA256_Update(&state, digest, RNCryptor.Format.hmacLength) == 1, SHA256_Final(digest, &state) == 1 else {
      throw LibCrypto.failure("SHA256_Final")
    }
  }
}

/// Counts the forks this process has gone through, as seen by the child (`pthread_atfork`).
private let forkGeneration = Atomic<Int>(0)

/// Random bytes drawn from `RAND_bytes` in blocks of 4 KiB and handed out in order.
///
/// A forked child refills before it hands out anything, so parent and child never share IVs.
/// The fork is noticed through a `pthread_atfork` handler rather than by comparing
/// `getpid()` on every call, which is a system call per message.
private final class RandomPool: @unchecked Sendable {
  private static let capacity = 4096
  private static let watchingForks: Bool = {
    pthread_atfork(nil, nil) { forkGeneration.add(1, ordering: .relaxed) } == 0
  }()

  private let lock = NSLock()
  // Guarded by `lock`.
  private var bytes = [UInt8](repeating: 0, count: RandomPool.capacity)
  private var position = RandomPool.capacity
  private var generation = -1
  private var owner: pid_t = 0

  init() {
    _ = Self.watchingForks
  }

  func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
    // Not `bytes.count`: reading `bytes` outside the lock races with the refill below.
    guard buffer.count <= Self.capacity else { return try LibCrypto.randomBytes(buffer) }
    lock.lock()
    defer { lock.unlock() }
    let current = forkGeneration.load(ordering: .relaxed)
    // Without the fork handler, fall back to checking the process id.
    let forked = current != generation || (!Self.watchingForks && owner != getpid())
    if position + buffer.count > bytes.count || forked {
      try bytes.withUnsafeMutableBytes { try LibCrypto.randomBytes($0) }
      position = 0
      generation = current
      owner = getpid()
    }
    bytes.withUnsafeMutableBytes { pool in
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: pool[position..<position + buffer.count]))
      // Handed-out bytes are not kept.
      LibCrypto.cleanse(UnsafeMutableRawBufferPointer(rebasing: pool[position..<position + buffer.count]))
    }
    position += buffer.count
  }
}

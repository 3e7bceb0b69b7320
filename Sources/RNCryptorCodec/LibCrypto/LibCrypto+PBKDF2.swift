internal import CLibCrypto
import Foundation
import Synchronization

extension LibCrypto {
  /// PBKDF2-HMAC-SHA1 with RNCryptor v3's parameters into a wiping buffer.
  static func deriveKey(password: SecureBytes, salt: UnsafeRawBufferPointer) throws
    -> SecureBytes
  {
    RNCryptor.keyDerivations.add(1, ordering: .relaxed)
    return try SecureBytes(count: RNCryptor.Format.keyLength) { (output) throws in
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
}

extension RNCryptor {
  /// How many password key derivations this process has run (one per PBKDF2 key, one per
  /// scrypt run): for tests that check where a derivation happens (a password change derives
  /// before it takes the store's writer lock).
  package static let keyDerivations = Atomic<Int>(0)
}

internal import CLibCrypto
import Foundation

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

  /// Writes the 32-byte MAC of `bytes`, a whole message, to `output`. The running state is a
  /// copy on the stack, wiped before returning: no allocation for a one-shot message.
  func authenticate(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer) throws {
    var state = states[0]
    defer { withUnsafeMutableBytes(of: &state) { LibCrypto.cleanse($0) } }
    if let base = bytes.baseAddress, bytes.count > 0 {
      guard SHA256_Update(&state, base, bytes.count) == 1 else { throw LibCrypto.failure("SHA256_Update") }
    }
    try Self.finish(&state, outer: states + 1, into: output)
  }

  /// Ends a running HMAC: the inner digest goes to `output` first, then is hashed under a copy
  /// of the outer state, which leaves the MAC there.
  fileprivate static func finish(
    _ state: inout SHA256_CTX, outer: UnsafeMutablePointer<SHA256_CTX>, into output: UnsafeMutableRawPointer
  ) throws {
    let digest = output.assumingMemoryBound(to: UInt8.self)
    guard SHA256_Final(digest, &state) == 1 else { throw LibCrypto.failure("SHA256_Final") }
    state = outer.pointee
    guard SHA256_Update(&state, digest, RNCryptor.Format.hmacLength) == 1, SHA256_Final(digest, &state) == 1 else {
      throw LibCrypto.failure("SHA256_Final")
    }
  }

  fileprivate var inner: SHA256_CTX { states[0] }

  fileprivate func finishState(_ state: inout SHA256_CTX, into output: UnsafeMutableRawPointer) throws {
    try Self.finish(&state, outer: states + 1, into: output)
  }
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
    try key.finishState(&state, into: output)
  }
}

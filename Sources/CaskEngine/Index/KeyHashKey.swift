/// The key of the hash a `KeyDirectory` places its keys with: SipHash-1-3 (the function
/// `Hasher` uses), keyed per directory rather than per process. Prevents: a checkpoint of the
/// tables (Docs/FORMAT.md, section 18) being useless in another process, where `Hasher`'s
/// seed differs and every key would have to be hashed and placed again (most of open's time,
/// Docs/FORMAT.md, section 13). Random for a directory built from hints; a directory loaded
/// from a checkpoint takes the checkpoint's, which is sealed inside its root, so the key stays
/// as unknown to whoever chooses the keys as `Hasher`'s seed (no crafted collisions).
struct KeyHashKey: Sendable, Hashable {
  var k0: UInt64
  var k1: UInt64

  /// A key from the system's random generator.
  static func random() -> KeyHashKey {
    var generator = SystemRandomNumberGenerator()
    return KeyHashKey(k0: generator.next(), k1: generator.next())
  }

  /// The key of tables that live only in this process (a streamed batch's pending keys).
  static let process = KeyHashKey.random()

  /// SipHash-1-3 of `bytes` under this key.
  ///
  /// - Complexity: O(bytes).
  @inline(__always)
  func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var state = SipState(
      v0: k0 ^ 0x736f_6d65_7073_6575, v1: k1 ^ 0x646f_7261_6e64_6f6d, v2: k0 ^ 0x6c79_6765_6e65_7261,
      v3: k1 ^ 0x7465_6462_7974_6573)
    let count = bytes.count
    var index = 0
    while index &+ 8 <= count {
      state.compress(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
      index &+= 8
    }
    var last = UInt64(truncatingIfNeeded: count) << 56
    var shift: UInt64 = 0
    while index < count {
      last |= UInt64(bytes[index]) << shift
      shift &+= 8
      index &+= 1
    }
    state.compress(last)
    state.v2 ^= 0xff
    state.round()
    state.round()
    state.round()
    return state.v0 ^ state.v1 ^ state.v2 ^ state.v3
  }
}

/// SipHash's four words.
private struct SipState {
  var v0: UInt64
  var v1: UInt64
  var v2: UInt64
  var v3: UInt64

  @inline(__always)
  mutating func compress(_ word: UInt64) {
    v3 ^= word
    round()
    v0 ^= word
  }

  @inline(__always)
  mutating func round() {
    v0 &+= v1
    v1 = v1.rotatedLeft(13) ^ v0
    v0 = v0.rotatedLeft(32)
    v2 &+= v3
    v3 = v3.rotatedLeft(16) ^ v2
    v0 &+= v3
    v3 = v3.rotatedLeft(21) ^ v0
    v2 &+= v1
    v1 = v1.rotatedLeft(17) ^ v2
    v2 = v2.rotatedLeft(32)
  }
}

extension UInt64 {
  @inline(__always)
  fileprivate func rotatedLeft(_ count: UInt64) -> UInt64 { (self << count) | (self >> (64 &- count)) }
}

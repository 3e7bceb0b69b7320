import Foundation

extension RNCryptor {
  /// The cost of scrypt (RFC 7914), the memory-hard key derivation that CipherCask uses to
  /// wrap a store's data key under a password. Not part of the RNCryptor v3 format, whose
  /// password messages always use PBKDF2; see Docs/SECURITY.md for what each costs a guesser.
  ///
  /// One derivation fills `128 · blockSize · costFactor` bytes of memory and reads them back
  /// `parallelism` times in turn.
  public struct ScryptParameters: Sendable, Hashable {
    /// N: how many 128·r-byte blocks are filled and read back. A power of two, at least 2.
    public var costFactor: UInt64
    /// r: the block size, in units of 128 bytes.
    public var blockSize: UInt32
    /// p: how many times the whole mixing runs (one after the other here).
    public var parallelism: UInt32

    /// Parameters as given; `validate()` says whether they may be used.
    public init(costFactor: UInt64, blockSize: UInt32, parallelism: UInt32) {
      self.costFactor = costFactor
      self.blockSize = blockSize
      self.parallelism = parallelism
    }

    /// N = 2^15, r = 8, p = 1: 32 MiB and about 100–250 ms on the project's machine
    /// (`cask-bench recovery` prints the figure), the cost of every password guess.
    public static let interactive = ScryptParameters(costFactor: 1 << 15, blockSize: 8, parallelism: 1)

    /// The most memory one derivation may take: 256 MiB. Prevents: a header (or caller) asking
    /// for an allocation the machine cannot make.
    public static let maximumMemory: UInt64 = 256 << 20
    /// The most mixing one derivation may do, `128 · r · N · p` bytes: 1 GiB, a few seconds.
    /// Prevents: a header whose parameters make an open run for hours.
    public static let maximumWork: UInt64 = 1 << 30
    /// The largest r and p accepted (RFC 7914 requires r · p < 2^30; these are far lower).
    public static let maximumBlockSize: UInt32 = 64
    /// The largest p accepted.
    public static let maximumParallelism: UInt32 = 64

    /// Bytes libcrypto allocates for one derivation: `128 · r · (N + p + 2)`. Meaningful only
    /// for parameters that `validate()` accepts.
    public var memoryBytes: UInt64 {
      128 * UInt64(blockSize) * (costFactor + UInt64(parallelism) + 2)
    }

    /// Checks the bounds, without overflow for any input.
    ///
    /// - Throws: `RNCryptor.Error.invalidScryptParameters` naming the first bound broken.
    public func validate() throws {
      guard costFactor >= 2, costFactor & (costFactor - 1) == 0 else {
        throw Error.invalidScryptParameters(reason: "N is not a power of two of at least 2")
      }
      guard (1...Self.maximumBlockSize).contains(blockSize) else {
        throw Error.invalidScryptParameters(reason: "r is not in 1...\(Self.maximumBlockSize)")
      }
      guard (1...Self.maximumParallelism).contains(parallelism) else {
        throw Error.invalidScryptParameters(reason: "p is not in 1...\(Self.maximumParallelism)")
      }
      // N ≤ 2^40 here would already be refused below; checking it first keeps every product
      // under 2^64 (128 · 64 · 2^40 · 64 = 2^59).
      guard costFactor <= 1 << 40, memoryBytes <= Self.maximumMemory else {
        throw Error.invalidScryptParameters(reason: "needs more than \(Self.maximumMemory >> 20) MiB of memory")
      }
      guard 128 * UInt64(blockSize) * costFactor * UInt64(parallelism) <= Self.maximumWork else {
        throw Error.invalidScryptParameters(reason: "128·r·N·p is more than \(Self.maximumWork >> 20) MiB of mixing")
      }
    }
  }

  /// Derives `count` bytes from `password` and `salt` with scrypt into a wiping buffer.
  ///
  /// - Throws: `.emptyPassword`, `.invalidScryptParameters` (checked before anything is
  ///   allocated), `.libcrypto`.
  /// - Complexity: `parameters.memoryBytes` of memory and time in proportion to
  ///   `128 · r · N · p`.
  public static func scrypt(
    password: SecureBytes, salt: Data, parameters: ScryptParameters, count: Int
  ) throws -> SecureBytes {
    guard password.count > 0 else { throw Error.emptyPassword }
    try parameters.validate()
    keyDerivations.add(1, ordering: .relaxed)
    return try SecureBytes(count: count) { (output) throws in
      try password.withUnsafeBytes { passwordBytes in
        try salt.withUnsafeBytes { saltBytes in
          try LibCrypto.scrypt(password: passwordBytes, salt: saltBytes, parameters: parameters, into: output)
        }
      }
    }
  }
}

extension RNCryptor.Keys {
  /// Derives both keys from a password with one scrypt run of 64 bytes: the first 32 are the
  /// encryption key, the last 32 the HMAC key.
  ///
  /// - Throws: `.emptyPassword`, `.invalidScryptParameters`, `.libcrypto`.
  /// - Complexity: one scrypt run (`RNCryptor.scrypt`).
  public init(password: SecureBytes, salt: Data, scrypt parameters: RNCryptor.ScryptParameters) throws {
    let derived = try RNCryptor.scrypt(
      password: password, salt: salt, parameters: parameters, count: 2 * RNCryptor.Format.keyLength)
    let keyLength = RNCryptor.Format.keyLength
    let (encryptionKey, hmacKey) = derived.withUnsafeBytes { bytes in
      (
        SecureBytes(UnsafeRawBufferPointer(rebasing: bytes[0..<keyLength])),
        SecureBytes(UnsafeRawBufferPointer(rebasing: bytes[keyLength...]))
      )
    }
    try self.init(encryptionKey: encryptionKey, hmacKey: hmacKey)
  }
}

extension RNCryptor {
  /// `count` bytes from libcrypto's random generator, for a salt.
  ///
  /// - Throws: `.randomGeneratorFailed`; never returns zeros in place of random bytes.
  public static func randomSalt(count: Int) throws -> Data {
    try LibCrypto.randomData(count: count)
  }
}

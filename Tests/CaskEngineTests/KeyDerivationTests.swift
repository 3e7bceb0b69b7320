import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// The header's key derivation: scrypt for new password stores, RNCryptor's PBKDF2 on request,
/// and scrypt parameters from disk refused before they cost memory or time.
@Suite("Key derivation of the store header")
struct KeyDerivationTests {
  /// scrypt small enough for tests (1 MiB), still within the bounds.
  static let quickScrypt = CaskStore.KeyDerivation.scrypt(
    RNCryptor.ScryptParameters(costFactor: 1024, blockSize: 8, parallelism: 1))
  static let derivations: [CaskStore.KeyDerivation] = [.rncryptor, quickScrypt]

  private static func options(_ derivation: CaskStore.KeyDerivation) -> CaskStore.Options {
    var options = CaskStore.Options(durability: .never, autoCompaction: nil)
    options.keyDerivation = derivation
    return options
  }

  private static func header(_ path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(CaskFormat.headerFileName)")))
  }

  /// Replaces the header with `bytes`, its CRC recomputed: damage a CRC cannot see.
  private static func writeHeader(_ bytes: [UInt8], to path: String) throws {
    var bytes = bytes
    let crc = CRC32C.checksum(bytes[0..<(bytes.count - 4)])
    withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange((bytes.count - 4)..., with: $0) }
    try Data(bytes).write(to: URL(fileURLWithPath: "\(path)/\(CaskFormat.headerFileName)"))
  }

  @Test("a store opens with its password under either derivation and refuses a wrong one", arguments: derivations)
  func roundTrip(_ derivation: CaskStore.KeyDerivation) throws {
    try withTemporaryDirectory("kdf-round-trip") { directory in
      let path = directory.file("store.cask")
      let store = try CaskStore(path: path, password: "right", options: Self.options(derivation))
      #expect(store.keyDerivation == derivation)
      try store.put(Data("value".utf8), forKey: "key")
      try store.close()
      #expect(throws: CaskError.wrongPassword) {
        try CaskStore(path: path, password: "wrong", options: Self.options(derivation))
      }
      // The derivation comes from the header, whatever the options ask for new stores.
      let reopened = try CaskStore(path: path, password: "right", options: Self.options(.standard))
      #expect(reopened.keyDerivation == derivation)
      #expect(try reopened.get("key") == Data("value".utf8))
      try reopened.close()
    }
  }

  @Test("new password stores wrap with scrypt by default; .rncryptor wraps in a password message")
  func headerLayouts() throws {
    // A version 5 header's key ring (its length, a key message of a 48-byte plaintext), store
    // identity and MAC, between the wrapped key and the CRC.
    let authenticatedTail = 4 + 114 + 16 + 32
    try withTemporaryDirectory("kdf-layout") { directory in
      let standard = try CaskStore(path: directory.file("default"), password: "pw")
      #expect(standard.keyDerivation == .standard)
      try standard.close()
      let scrypt = try Self.header(directory.file("default"))
      #expect(scrypt.count == 16 + 32 + 130 + authenticatedTail + 4)
      #expect(scrypt[8...9] == [5, 0])
      #expect(scrypt[10...11] == [0x0F, 0x00], "password, scrypt, key ring, authenticated")
      #expect(scrypt[12...15] == [162, 0, 0, 0])
      #expect(scrypt[16...23] == [0x00, 0x80, 0, 0, 0, 0, 0, 0], "N = 2^15, little-endian")
      #expect(scrypt[24...27] == [8, 0, 0, 0])
      #expect(scrypt[28...31] == [1, 0, 0, 0])
      #expect(scrypt[48...49] == [3, 0], "a key message follows the salt")

      let old = try CaskStore(path: directory.file("old"), password: "pw", options: Self.options(.rncryptor))
      try old.close()
      let rncryptor = try Self.header(directory.file("old"))
      #expect(rncryptor.count == 16 + 146 + authenticatedTail + 4)
      #expect(rncryptor[10...11] == [0x0D, 0x00])
      #expect(rncryptor[16...17] == [3, 1], "a password message starts the wrapped key")

      let keyed = try CaskStore(path: directory.file("keys"), keys: RNCryptor.Keys.random())
      #expect(keyed.keyDerivation == nil)
      try keyed.close()
      #expect(try Self.header(directory.file("keys")).count == 16 + 130 + authenticatedTail + 4)
    }
  }

  @Test("version 2 and version 3 stores with an RNCryptor password header open as before")
  func oldHeadersOpen() throws {
    for version in [CaskFormat.oldestReadableVersion, CaskFormat.boundRecordsVersion] {
      try withTemporaryDirectory("kdf-old") { directory in
        let path = directory.file("store.cask")
        var options = Self.options(.rncryptor)
        options.newStoreFormatVersion = version
        let store = try CaskStore(path: path, password: "pw", options: options)
        try store.put(Data("v".utf8), forKey: "k")
        try store.close()
        // Opened with today's default options, which would give a new store scrypt.
        let reopened = try CaskStore(path: path, password: "pw", options: Self.options(.standard))
        #expect(reopened.keyDerivation == .rncryptor)
        #expect(try reopened.get("k") == Data("v".utf8))
        try reopened.close()
        #expect(try Self.header(path).count == 166, "opening rewrote the header of version \(version)")
      }
    }
  }

  @Test("a password change keeps the store's derivation unless told otherwise", arguments: derivations)
  func passwordChangeKeepsDerivation(_ derivation: CaskStore.KeyDerivation) throws {
    try withTemporaryDirectory("kdf-passwd") { directory in
      let path = directory.file("store.cask")
      let store = try CaskStore(path: path, password: "one", options: Self.options(derivation))
      try store.put(Data("v".utf8), forKey: "k")
      try store.changePassword(to: "two")
      #expect(store.keyDerivation == derivation)
      let other: CaskStore.KeyDerivation = derivation == .rncryptor ? Self.quickScrypt : .rncryptor
      try store.changePassword(to: "three", keyDerivation: other)
      #expect(store.keyDerivation == other)
      try store.close()
      for password in ["one", "two"] {
        #expect(throws: CaskError.wrongPassword) { try CaskStore(path: path, password: password) }
      }
      let reopened = try CaskStore(path: path, password: "three")
      #expect(reopened.keyDerivation == other)
      #expect(try reopened.get("k") == Data("v".utf8))
      try reopened.close()
    }
  }

  @Test("scrypt parameters out of bounds are refused at create and at a password change")
  func refusesUnusableParameters() throws {
    try withTemporaryDirectory("kdf-bounds") { directory in
      let huge = CaskStore.KeyDerivation.scrypt(
        RNCryptor.ScryptParameters(costFactor: 1 << 30, blockSize: 8, parallelism: 1))
      #expect(throws: CaskError.self) {
        try CaskStore(path: directory.file("new"), password: "pw", options: Self.options(huge))
      }
      let store = try CaskStore(path: directory.file("store"), password: "pw", options: Self.options(Self.quickScrypt))
      defer { try? store.close() }
      let error = #expect(throws: CaskError.self) { try store.changePassword(to: "new", keyDerivation: huge) }
      guard case .invalidKey(let reason) = error else {
        Issue.record("got \(String(describing: error)), not invalidKey")
        return
      }
      #expect(reason.contains("memory"))
    }
  }

  /// A field of the scrypt parameters (offset in the file), a value for it, and a word the
  /// error must give as the reason.
  struct ParameterDamage: Sendable, CustomTestStringConvertible {
    var offset: Int
    var bytes: [UInt8]
    var reason: String
    var testDescription: String { "\(bytes) at \(offset)" }
  }

  static let damages: [ParameterDamage] = [
    ParameterDamage(offset: 16, bytes: [0xB8, 0x0B, 0, 0, 0, 0, 0, 0], reason: "power of two"),  // N = 3000
    ParameterDamage(offset: 16, bytes: [0, 0, 0, 0, 0, 0, 0, 0], reason: "power of two"),
    ParameterDamage(offset: 16, bytes: [0, 0, 0, 0, 0, 0, 0, 0x80], reason: "memory"),  // N = 2^63
    ParameterDamage(offset: 16, bytes: [0, 0, 0, 0x40, 0, 0, 0, 0], reason: "memory"),  // N = 2^30
    ParameterDamage(offset: 24, bytes: [0, 0, 0, 0], reason: "r is not"),
    ParameterDamage(offset: 24, bytes: [0xFF, 0xFF, 0xFF, 0xFF], reason: "r is not"),
    ParameterDamage(offset: 28, bytes: [0xFF, 0xFF, 0xFF, 0xFF], reason: "p is not"),
    ParameterDamage(offset: 28, bytes: [64, 0, 0, 0], reason: "mixing"),  // 128 MiB read 64 times
  ]

  @Test("absurd scrypt parameters in a header with a good CRC fail open with corrupt naming CASK", arguments: damages)
  func refusesAbsurdHeaderParameters(_ damage: ParameterDamage) throws {
    try withTemporaryDirectory("kdf-damage") { directory in
      let path = directory.file("store.cask")
      let options = Self.options(Self.quickScrypt)
      // A cheap store, then its header given N = 2^17 (128 MiB, in bounds) by hand, so that
      // only the damaged field is out of bounds.
      try CaskStore(path: path, password: "pw", options: options).close()
      var bytes = try Self.header(path)
      bytes.replaceSubrange(16..<24, with: [0, 0, 2, 0, 0, 0, 0, 0])
      bytes.replaceSubrange(damage.offset..<(damage.offset + damage.bytes.count), with: damage.bytes)
      try Self.writeHeader(bytes, to: path)
      let error = #expect(throws: CaskError.self) { try CaskStore(path: path, password: "pw", options: options) }
      guard case .corrupt(let file, let offset, let reason) = error else {
        Issue.record("got \(String(describing: error)), not corrupt")
        return
      }
      #expect(file == "\(path)/\(CaskFormat.headerFileName)")
      #expect(offset == 16)
      #expect(reason.contains(damage.reason), "\(reason)")
    }
  }

  @Test("changed parameters within the bounds, or a changed salt, read as a wrong password")
  func changedParametersAreAWrongPassword() throws {
    try withTemporaryDirectory("kdf-changed") { directory in
      let path = directory.file("store.cask")
      try CaskStore(path: path, password: "pw", options: Self.options(Self.quickScrypt)).close()
      let pristine = try Self.header(path)
      // Parameters are set to other values in bounds; salt bytes (32 and 47) are random, so
      // they are flipped rather than set. Prevents: a set value that the salt already held.
      let changes: [(offset: Int, change: (UInt8) -> UInt8)] = [
        (17, { _ in 0x02 }), (24, { _ in 4 }), (28, { _ in 2 }), (32, { $0 ^ 0xAA }), (47, { $0 ^ 0x55 }),
      ]
      for (offset, change) in changes {
        var bytes = pristine
        bytes[offset] = change(bytes[offset])
        #expect(bytes != pristine, "byte \(offset)")
        try Self.writeHeader(bytes, to: path)
        #expect(throws: CaskError.wrongPassword, "byte \(offset)") {
          try CaskStore(path: path, password: "pw", options: Self.options(Self.quickScrypt))
        }
      }
    }
  }

  @Test("the scrypt flag without the password flag is a key-wrapped header")
  func scryptFlagAloneIsIgnored() throws {
    try withTemporaryDirectory("kdf-flag") { directory in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      // A version 3 header: in a version 5 one the MAC refuses any flag changed.
      var options = Self.options(.standard)
      options.newStoreFormatVersion = CaskFormat.boundRecordsVersion
      try CaskStore(path: path, keys: keys, options: options).close()
      var bytes = try Self.header(path)
      bytes[10] = 0x02
      try Self.writeHeader(bytes, to: path)
      let store = try CaskStore(path: path, keys: keys, options: Self.options(.standard))
      #expect(store.keyDerivation == nil)
      try store.close()
    }
  }
}

import CaskEngine
import Foundation
import FuzzSupport
import RNCryptorCodec

/// fuzz-header: a store whose header file (`CASK`: magic, version, flags, wrapped data key,
/// a version 4 header's key ring, CRC) is the fuzz input, beside one valid segment, opened
/// through the public API.
///
/// Input: one mode byte, then the header file. Mode bit 0 repairs the CRC when the claimed
/// length fits (so mutations reach the version check and the key unwrapping behind it), bit 1
/// opens read-only, bit 2 opens with the password instead of the keys (two PBKDF2 runs or a
/// scrypt run: slow, so only a few seeds use it, the scrypt one with N = 16, r = 1, p = 1).
/// Beside the segment lies the store's manifest: when the header claims version 4, one with
/// key epochs sealed under `currentKeys` (the key of the ring seeds' current epoch), else one
/// sealed under the data key.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHeader(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  HeaderTarget.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

enum HeaderTarget {
  static let password = "fuzz-password"
  static let segment: [UInt8] = {
    do {
      return try FuzzSeedStore.sealedSegment().bytes
    } catch {
      fatalError("seed segment: \(error)")
    }
  }()

  /// The data key of the current epoch in the version 4 seeds; the segment's (epoch 0) is in
  /// their key ring.
  static let currentKey = Data((0..<64).map { UInt8(200 - $0) })
  static let currentKeys = keys {
    try RNCryptor.Keys(encryptionKey: currentKey.prefix(32), hmacKey: currentKey.suffix(32))
  }

  /// The store directory with the segment and its manifest (without and with key epochs),
  /// laid out once per process.
  static let template = FuzzStore.disk(with: [
    ("00000001.seg", Data(segment)),
    (
      CaskFormat.manifestFileName,
      FuzzStore.manifestFile(keys { try FuzzSeedStore.manifestPayload(length: segment.count) })
    ),
  ])
  static let epochTemplate = FuzzStore.disk(with: [
    ("00000001.seg", Data(segment)),
    (
      CaskFormat.manifestFileName,
      FuzzStore.manifestFile(
        keys { try FuzzSeedStore.manifestPayload(length: segment.count, hasEpochs: true, dataKeys: currentKeys) },
        keys: currentKeys)
    ),
  ])

  private static func keys<Value>(_ make: () throws -> Value) -> Value {
    do {
      return try make()
    } catch {
      fatalError("the fuzzing store's keys and files: \(error)")
    }
  }

  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    var header = [UInt8](input.rest())
    if mode & 1 != 0 { FuzzingEntry.repairHeaderChecksum(&header) }
    let claimsEpochs = header.count >= 10 && header[8] == UInt8(CaskFormat.keyEpochsVersion) && header[9] == 0
    let fileSystem = FuzzStore.disk(
      with: [(CaskFormat.headerFileName, Data(header))], on: claimsEpochs ? epochTemplate : template)
    let options = FuzzStore.options(fileSystem, readOnly: mode & 2 != 0)
    do {
      let store =
        mode & 4 != 0
        ? try CaskStore(path: FuzzStore.path, password: password, options: options)
        : try CaskStore(path: FuzzStore.path, keys: FuzzStore.userKeys, options: options)
      defer { try? store.close() }
      // Whatever the header, a store that opened holds exactly the segment's records, or,
      // when the header claims another readable format version than the segment's, none:
      // the segment is then reported and not read (its records would read as another layout).
      if store.stats().recovery.unreadableSegments == ["00000001.seg"] {
        FuzzReplay.check(try store.keys().isEmpty, "keys of an unreadable segment after opening")
      } else {
        FuzzReplay.check(try store.keys() == FuzzSeedStore.liveKeys, "keys after opening")
        FuzzReplay.check(try store.get("user:2") == Data("bob".utf8), "a value after opening")
      }
    } catch {
      FuzzReplay.check(error is CaskError, "open threw a non-CaskError: \(type(of: error))")
    }
  }

  /// Headers wrapped under keys, under a password (PBKDF2 and scrypt), of this version, with key
  /// rings of one and two older epochs, a newer and an older version, cut short, and with a
  /// wrapped key of the wrong length.
  static func seeds() throws -> [(String, Data)] {
    var dataKey = FuzzStore.dataKeys.encryptionKey.withUnsafeBytes { Data($0) }
    FuzzStore.dataKeys.hmacKey.withUnsafeBytes { dataKey.append(contentsOf: $0) }
    let salts = (encryption: Data((0..<8).map { UInt8($0) }), hmac: Data((8..<16).map { UInt8($0) }))
    let passwordKeys = try RNCryptor.PasswordKeys(
      password: password, encryptionSalt: salts.encryption, hmacSalt: salts.hmac)
    let byPassword = try RNCryptor.seal(dataKey, keys: passwordKeys.keys, salts: salts, iv: FuzzStore.iv(3))
    let byKeys = FuzzStore.seal(dataKey, keys: FuzzStore.userKeys, iv: 0)
    func header(_ wrapped: Data, password: Bool = false, version: UInt16 = CaskFormat.boundRecordsVersion) -> [UInt8] {
      FuzzingEntry.storeHeader(wrappedKey: wrapped, passwordWrapped: password, version: version)
    }
    let keys = header(byKeys)
    let scrypt = RNCryptor.ScryptParameters(costFactor: 16, blockSize: 1, parallelism: 1)
    let scryptSalt = Data((16..<32).map { UInt8($0) })
    let scryptKeys = try RNCryptor.Keys(password: SecureBytes(utf8: password), salt: scryptSalt, scrypt: scrypt)
    let byScrypt = FuzzingEntry.scryptStoreHeader(
      keyMessage: FuzzStore.seal(dataKey, keys: scryptKeys, iv: 4), parameters: scrypt, salt: scryptSalt,
      version: CaskFormat.boundRecordsVersion)
    // Version 4: the current key (epoch 1) wraps under the caller's keys; the segment's key
    // (epoch 0) is in the ring, sealed under the current one. With two older epochs, the
    // current one is 2 and epoch 1's key is one no segment uses.
    let ring = FuzzStore.seal(
      FuzzingEntry.keyRingPlaintext(currentEpoch: 1, older: [(0, dataKey)]), keys: currentKeys, iv: 5)
    let wrappedCurrent = FuzzStore.seal(currentKey, keys: FuzzStore.userKeys, iv: 6)
    let epochs = FuzzingEntry.keyRingStoreHeader(wrappedKey: wrappedCurrent, keyRing: ring)
    let twoOlder = FuzzStore.seal(
      FuzzingEntry.keyRingPlaintext(
        currentEpoch: 2, older: [(0, dataKey), (1, Data((0..<64).map { UInt8(0x60 + $0) }))]),
      keys: currentKeys, iv: 10)
    let twoEpochs = FuzzingEntry.keyRingStoreHeader(wrappedKey: wrappedCurrent, keyRing: twoOlder)
    return [
      ("keys", Data([0] + keys)), ("keys-readonly", Data([2] + keys)),
      ("keys-key-ring", Data([0] + epochs)), ("keys-key-ring-readonly", Data([2] + epochs)),
      ("keys-key-ring-repaired", Data([1] + epochs)), ("keys-key-ring-two-epochs", Data([0] + twoEpochs)),
      ("keys-key-ring-two-epochs-readonly", Data([2] + twoEpochs)),
      ("password", Data([4] + header(byPassword, password: true))),
      ("password-scrypt", Data([4] + byScrypt)), ("password-scrypt-keys", Data([0] + byScrypt)),
      ("password-flag-keys-message", Data([1] + header(byKeys, password: true))),
      ("newer-version", Data([0] + header(byKeys, version: CaskFormat.authenticatedVersion + 1))),
      ("version-4-without-ring", Data([0] + header(byKeys, version: CaskFormat.keyEpochsVersion))),
      ("older-version", Data([0] + header(byKeys, version: 1))),
      ("readable-older-version", Data([0] + header(byKeys, version: CaskFormat.oldestReadableVersion))),
      ("cut", Data([0] + keys.prefix(keys.count - 5))), ("not-a-store", Data([0] + Array("hello, world\n".utf8))),
      ("short-key", Data([0] + header(FuzzStore.seal(Data(repeating: 1, count: 32), keys: FuzzStore.userKeys, iv: 1)))),
    ]
  }
}

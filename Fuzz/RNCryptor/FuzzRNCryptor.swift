import Foundation
import FuzzSupport
import RNCryptorCodec

/// fuzz-rncryptor: the RNCryptor v3 decoder, one-shot and streaming, with keys and with a
/// password, checked against itself.
///
/// Input: a mode byte, a chunk-size byte, then the message. Whatever the bytes: only
/// `RNCryptor.Error` may be thrown; the one-shot and streaming decoders accept the same
/// messages and return the same plaintext; what decrypts re-encrypts and decrypts back.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRNCryptor(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  RNCryptorTarget.test(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}

enum RNCryptorTarget {
  static let password = "fuzz-password"
  static let keys: RNCryptor.Keys = {
    do {
      return try RNCryptor.Keys(
        encryptionKey: Data((0..<32).map { UInt8($0) }), hmacKey: Data((32..<64).map { UInt8($0) }))
    } catch {
      fatalError("fixed keys: \(error)")
    }
  }()
  static let salts = (encryption: Data((0..<8).map { UInt8($0) }), hmac: Data((8..<16).map { UInt8($0) }))
  /// Derived once; messages with other salts fail to authenticate without a PBKDF2 run.
  static let passwordKeys: RNCryptor.PasswordKeys = {
    do {
      return try RNCryptor.PasswordKeys(password: password, encryptionSalt: salts.encryption, hmacSalt: salts.hmac)
    } catch {
      fatalError("fixed password keys: \(error)")
    }
  }()
  static let cache: RNCryptor.PasswordKeyCache = {
    do {
      let cache = try RNCryptor.PasswordKeyCache(password: password)
      cache.insert(passwordKeys)
      return cache
    } catch {
      fatalError("password cache: \(error)")
    }
  }()

  static func test(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    let mode = input.byte()
    let chunk = Int(input.byte() % 64) + 1
    let message = input.rest()
    let isPasswordMessage = message.count >= 2 && message[message.startIndex + 1] == RNCryptor.Format.passwordOptions
    let knownSalts =
      message.count >= 18 && message[(message.startIndex + 2)..<(message.startIndex + 10)] == salts.encryption
      && message[(message.startIndex + 10)..<(message.startIndex + 18)] == salts.hmac
    switch mode % 4 {
    case 0:
      let oneShot = attempt { try RNCryptor.decrypt(message, keys: keys) }
      compare(oneShot, attempt { try stream(message, chunk: chunk, decryptor: RNCryptor.Decryptor(keys: keys)) })
      if let plaintext = oneShot { roundTrip(plaintext, keys: keys) }
      _ = attempt { try RNCryptor.decryptSecret(message, keys: keys) }
    case 1:
      let oneShot = attempt { try RNCryptor.decrypt(message, passwordKeys: passwordKeys) }
      if knownSalts || !isPasswordMessage {
        // The cache would run PBKDF2 for unknown salts: only known ones are streamed.
        compare(
          oneShot,
          attempt { try stream(message, chunk: chunk, decryptor: RNCryptor.Decryptor(passwordKeyCache: cache)) })
      }
      if let plaintext = oneShot {
        let again = attempt {
          try RNCryptor.decrypt(RNCryptor.encrypt(plaintext, passwordKeys: passwordKeys), passwordKeys: passwordKeys)
        }
        FuzzReplay.check(again == plaintext, "a password round trip changed the plaintext")
      }
      _ = attempt { try RNCryptor.passwordSalts(of: message) }
    case 2:
      // The password itself: two PBKDF2 runs, so only for messages with the seed's salts
      // (elsewhere the salts would make every input slow for nothing new).
      if knownSalts || !isPasswordMessage {
        compare(
          attempt { try RNCryptor.decrypt(message, password: password) },
          attempt { try RNCryptor.decrypt(message, passwordKeys: passwordKeys) })
      }
    default:
      _ = attempt { try RNCryptor.Format.credentialType(of: message) }
      _ = attempt { try stream(message, chunk: chunk, decryptor: RNCryptor.Decryptor(keys: keys)) }
    }
  }

  /// Runs `body`; only `RNCryptor.Error` may come out of it.
  static func attempt<T>(_ body: () throws -> T) -> T? {
    do {
      return try body()
    } catch {
      FuzzReplay.check(error is RNCryptor.Error, "a non-RNCryptor error: \(type(of: error))")
      return nil
    }
  }

  static func compare(_ oneShot: Data?, _ streamed: Data?) {
    FuzzReplay.check(
      oneShot == streamed,
      "one-shot and streaming decryption disagree: \(oneShot?.count ?? -1) vs \(streamed?.count ?? -1) bytes")
  }

  static func stream(_ message: Data, chunk: Int, decryptor: RNCryptor.Decryptor) throws -> Data {
    var output = Data()
    var start = message.startIndex
    while start < message.endIndex {
      let end = min(start + chunk, message.endIndex)
      output += try decryptor.update(Data(message[start..<end]))
      start = end
    }
    output += try decryptor.finalize()
    return output
  }

  static func roundTrip(_ plaintext: Data, keys: RNCryptor.Keys) {
    let again = attempt { try RNCryptor.decrypt(RNCryptor.encrypt(plaintext, keys: keys), keys: keys) }
    FuzzReplay.check(again == plaintext, "a key round trip changed the plaintext")
  }

  /// Key and password messages of every length class (empty, under a block, one block, a block
  /// and one byte, many blocks), a truncated one and a tampered one.
  static func seeds() throws -> [(String, Data)] {
    var seeds: [(String, Data)] = []
    for (index, length) in [0, 1, 15, 16, 17, 100, 1000].enumerated() {
      let plaintext = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 13) })
      let iv = Data((0..<16).map { UInt8(truncatingIfNeeded: index &* 17 &+ $0) })
      let keyMessage = try RNCryptor.seal(plaintext, keys: keys, salts: nil, iv: iv)
      let passwordMessage = try RNCryptor.seal(plaintext, keys: passwordKeys.keys, salts: salts, iv: iv)
      seeds.append(("keys-\(length)", Data([0, 7]) + keyMessage))
      seeds.append(("password-keys-\(length)", Data([1, 5]) + passwordMessage))
      if length == 17 {
        seeds.append(("password-\(length)", Data([2, 63]) + passwordMessage))
        seeds.append(("truncated-\(length)", Data([0, 3]) + keyMessage.dropLast(1)))
        var tampered = keyMessage
        tampered[20] ^= 1
        seeds.append(("tampered-\(length)", Data([3, 0]) + tampered))
      }
    }
    return seeds
  }
}

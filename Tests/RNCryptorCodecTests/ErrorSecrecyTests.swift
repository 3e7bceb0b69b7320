import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

/// No error text carries a secret: every error the codec throws is provoked here with a
/// distinctive password, keys and plaintext, and each of its renderings is searched for them.
/// Prevents a password, key or plaintext reaching logs or a terminal through an error message.
@Suite("Errors never contain secrets")
struct ErrorSecrecyTests {
  private static let password = "Tr0ub4dor&3-密码-🔑"
  private static let plaintext = Data("PLAINTEXT-CANARY-5f1e".utf8)
  private static let encryptionKey = Data((0..<32).map { UInt8(0x80 + $0) })
  private static let hmacKey = Data((0..<32).map { UInt8(0x3F - $0) })

  private static func hex(_ data: Data) -> String {
    data.map { String(format: "%02x", $0) }.joined()
  }

  /// Every spelling of a secret an error text might contain.
  private static let secrets: [String] = {
    var secrets = [password, hex(Data(password.utf8)), String(decoding: plaintext, as: UTF8.self)]
    for key in [encryptionKey, hmacKey] {
      secrets += [hex(key), hex(key).uppercased(), key.base64EncodedString(), "\(Array(key))"]
    }
    return secrets
  }()

  /// The name of an error case; exhaustive, so a new case stops this file compiling until it
  /// is considered here.
  private static func caseName(_ error: RNCryptor.Error) -> String {
    switch error {
    case .unknownVersion: return "unknownVersion"
    case .unknownOptions: return "unknownOptions"
    case .wrongCredentialType: return "wrongCredentialType"
    case .messageTooShort: return "messageTooShort"
    case .authenticationFailed: return "authenticationFailed"
    case .badPadding: return "badPadding"
    case .invalidKeyLength: return "invalidKeyLength"
    case .invalidSaltLength: return "invalidSaltLength"
    case .emptyPassword: return "emptyPassword"
    case .invalidScryptParameters: return "invalidScryptParameters"
    case .streamFinished: return "streamFinished"
    // Not provokable from a test: the RNG and libcrypto do not fail on demand.
    case .randomGeneratorFailed: return "randomGeneratorFailed"
    case .libcrypto: return "libcrypto"
    case .file: return "file"
    }
  }

  /// Runs `body`, which must throw an `RNCryptor.Error`, and returns that error.
  private func thrown(_ label: String, _ body: () throws -> Any) -> RNCryptor.Error? {
    do {
      _ = try body()
      Issue.record("\(label): did not throw")
    } catch let error as RNCryptor.Error {
      return error
    } catch {
      Issue.record("\(label): threw \(error), not an RNCryptor.Error")
    }
    return nil
  }

  @Test("no error the codec throws mentions the password, the keys or the plaintext")
  func noSecrets() throws {
    let password = Self.password
    let keys = try RNCryptor.Keys(encryptionKey: Self.encryptionKey, hmacKey: Self.hmacKey)
    let otherKeys = try RNCryptor.Keys(encryptionKey: Self.hmacKey, hmacKey: Self.encryptionKey)
    let passwordKeys = try RNCryptor.PasswordKeys(password: password)
    let keyMessage = try RNCryptor.encrypt(Self.plaintext, keys: keys)
    let passwordMessage = try RNCryptor.encrypt(Self.plaintext, passwordKeys: passwordKeys)
    var tampered = passwordMessage
    tampered[40] ^= 0x04
    try withTemporaryDirectory("cask-secrecy") { directory throws in
      let finished = try RNCryptor.Encryptor(keys: keys)
      _ = try finished.finalize()

      let provoked: [(String, () throws -> Any)] = [
        ("wrong password", { try RNCryptor.decrypt(passwordMessage, password: password + "x") }),
        ("wrong keys", { try RNCryptor.decrypt(keyMessage, keys: otherKeys) }),
        ("tampered", { try RNCryptor.decrypt(tampered, password: password) }),
        (
          "streaming wrong password",
          {
            let decryptor = RNCryptor.Decryptor(password: password + "x")
            return try stream(passwordMessage, through: decryptor, chunkLengths: [passwordMessage.count])
          }
        ),
        ("key message to password", { try RNCryptor.decrypt(keyMessage, password: password) }),
        ("password message to keys", { try RNCryptor.decrypt(passwordMessage, keys: keys) }),
        ("truncated", { try RNCryptor.decrypt(passwordMessage.prefix(50), password: password) }),
        ("version", { try RNCryptor.decrypt(Data([2]) + passwordMessage.dropFirst(), password: password) }),
        ("options", { try RNCryptor.decrypt(Data([3, 7]) + keyMessage.dropFirst(2), keys: keys) }),
        ("empty password", { try RNCryptor.encrypt(Self.plaintext, password: "") }),
        ("short key", { try RNCryptor.Keys(encryptionKey: Self.encryptionKey.prefix(31), hmacKey: Self.hmacKey) }),
        (
          "short salt",
          { try RNCryptor.Keys(password: password, encryptionSalt: Data(count: 7), hmacSalt: Data(count: 8)) }
        ),
        (
          "scrypt cost",
          {
            try RNCryptor.Keys(
              password: SecureBytes(utf8: password), salt: Data(count: 16),
              scrypt: RNCryptor.ScryptParameters(costFactor: 1 << 30, blockSize: 8, parallelism: 1))
          }
        ),
        ("bad padding", { try RNCryptor.decrypt(badlyPaddedMessage(keys: keys), keys: keys) }),
        ("finished stream", { try finished.update(Self.plaintext) }),
        (
          "missing file",
          { try RNCryptor.decryptFile(at: directory.file("absent"), to: directory.file("out"), keys: keys) }
        ),
      ]
      var covered: Set<String> = []
      for (label, body) in provoked {
        guard let error = thrown(label, body) else { continue }
        covered.insert(Self.caseName(error))
        let renderings = [
          error.description, String(describing: error), String(reflecting: error), error.localizedDescription,
        ]
        for text in renderings {
          for secret in Self.secrets {
            #expect(!text.contains(secret), "\(label): error text \"\(text)\" contains a secret")
          }
        }
      }
      let expected: Set = [
        "authenticationFailed", "wrongCredentialType", "messageTooShort", "unknownVersion", "unknownOptions",
        "emptyPassword", "invalidKeyLength", "invalidSaltLength", "streamFinished", "badPadding", "file",
        "invalidScryptParameters",
      ]
      #expect(covered == expected)
    }
  }
}

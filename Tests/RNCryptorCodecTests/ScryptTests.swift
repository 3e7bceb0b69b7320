import CaskTestSupport
import Foundation
import Testing

@testable import RNCryptorCodec

/// scrypt through libcrypto: the keys RFC 7914 defines, and parameters refused before any
/// allocation.
@Suite("scrypt")
struct ScryptTests {
  private static func hex(_ bytes: SecureBytes) -> String {
    bytes.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
  }

  private static func derive(_ password: String, _ salt: String, _ parameters: RNCryptor.ScryptParameters) throws
    -> String
  {
    let output = try SecureBytes(count: 64) { output in
      try Array(password.utf8).withUnsafeBytes { passwordBytes in
        try Array(salt.utf8).withUnsafeBytes { saltBytes in
          try LibCrypto.scrypt(password: passwordBytes, salt: saltBytes, parameters: parameters, into: output)
        }
      }
    }
    return hex(output)
  }

  @Test("RFC 7914's test vectors with an empty password and a small cost")
  func rfc7914EmptyPassword() throws {
    let derived = try Self.derive("", "", RNCryptor.ScryptParameters(costFactor: 16, blockSize: 1, parallelism: 1))
    #expect(
      derived
        == "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
        + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906")
  }

  @Test("RFC 7914's test vector for password/NaCl, N=1024, r=8, p=16, through the public call")
  func rfc7914NaCl() throws {
    let derived = try RNCryptor.scrypt(
      password: SecureBytes(utf8: "password"), salt: Data("NaCl".utf8),
      parameters: RNCryptor.ScryptParameters(costFactor: 1024, blockSize: 8, parallelism: 16), count: 64)
    #expect(
      Self.hex(derived)
        == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
        + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
  }

  @Test("keys from scrypt split the 64 derived bytes into the encryption key, then the HMAC key")
  func keysSplitTheDerivedBytes() throws {
    let parameters = RNCryptor.ScryptParameters(costFactor: 1024, blockSize: 8, parallelism: 16)
    let keys = try RNCryptor.Keys(password: SecureBytes(utf8: "password"), salt: Data("NaCl".utf8), scrypt: parameters)
    #expect(Self.hex(keys.encryptionKey) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162")
    #expect(Self.hex(keys.hmacKey) == "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
  }

  /// A parameter set outside the bounds, and a word of the reason it must be refused with.
  struct Unusable: Sendable, CustomTestStringConvertible {
    var parameters: RNCryptor.ScryptParameters
    var reason: String
    var testDescription: String {
      "N=\(parameters.costFactor) r=\(parameters.blockSize) p=\(parameters.parallelism)"
    }

    init(_ costFactor: UInt64, _ blockSize: UInt32, _ parallelism: UInt32, _ reason: String) {
      parameters = RNCryptor.ScryptParameters(costFactor: costFactor, blockSize: blockSize, parallelism: parallelism)
      self.reason = reason
    }
  }

  static let unusable: [Unusable] = [
    Unusable(0, 8, 1, "power of two"),
    Unusable(1, 8, 1, "power of two"),
    Unusable(3000, 8, 1, "power of two"),
    Unusable(1 << 63, 8, 1, "memory"),
    Unusable(1 << 20, 8, 1, "memory"),
    Unusable(1 << 15, 0, 1, "r is not"),
    Unusable(1 << 15, .max, 1, "r is not"),
    Unusable(1 << 15, 8, 0, "p is not"),
    Unusable(1 << 15, 8, .max, "p is not"),
    Unusable(1 << 17, 8, 16, "mixing"),
  ]

  @Test("parameters outside the bounds are refused before libcrypto is called", arguments: unusable)
  func refusesParametersOutOfBounds(_ case: Unusable) {
    #expect {
      _ = try RNCryptor.scrypt(
        password: SecureBytes(utf8: "pw"), salt: Data(count: 16), parameters: `case`.parameters, count: 64)
    } throws: { error in
      guard case .invalidScryptParameters(let text) = error as? RNCryptor.Error else { return false }
      return text.contains(`case`.reason)
    }
  }

  @Test("the interactive parameters are within the bounds and take 32 MiB")
  func interactiveParametersAreValid() throws {
    try RNCryptor.ScryptParameters.interactive.validate()
    #expect(RNCryptor.ScryptParameters.interactive.memoryBytes >> 20 == 32)
  }

  @Test("an empty password is refused")
  func emptyPassword() {
    #expect(throws: RNCryptor.Error.emptyPassword) {
      _ = try RNCryptor.scrypt(
        password: SecureBytes(utf8: ""), salt: Data(count: 16), parameters: .interactive, count: 64)
    }
  }
}

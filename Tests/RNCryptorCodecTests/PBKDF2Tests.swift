import CLibCrypto
import CaskTestSupport
import Foundation
import Testing

@testable import RNCryptorCodec

/// The codec computes PBKDF2-HMAC-SHA1 itself (from precomputed SHA-1 states) instead of
/// calling `PKCS5_PBKDF2_HMAC`; every key it derives must be the one the standard defines.
@Suite("PBKDF2-HMAC-SHA1")
struct PBKDF2Tests {
  private static func derive(_ password: [UInt8], _ salt: [UInt8], iterations: Int, length: Int) throws -> [UInt8] {
    var output = [UInt8](repeating: 0, count: length)
    try password.withUnsafeBytes { passwordBytes in
      try salt.withUnsafeBytes { saltBytes in
        try output.withUnsafeMutableBytes { outputBytes in
          try LibCrypto.pbkdf2SHA1(password: passwordBytes, salt: saltBytes, iterations: iterations, into: outputBytes)
        }
      }
    }
    return output
  }

  /// OpenSSL's own implementation, as the reference.
  private static func reference(_ password: [UInt8], _ salt: [UInt8], iterations: Int, length: Int) -> [UInt8]? {
    var output = [UInt8](repeating: 0, count: length)
    let status = password.withUnsafeBufferPointer { passwordBytes in
      salt.withUnsafeBufferPointer { saltBytes in
        passwordBytes.withMemoryRebound(to: CChar.self) { passwordChars in
          PKCS5_PBKDF2_HMAC(
            passwordChars.baseAddress, Int32(password.count), saltBytes.baseAddress, Int32(salt.count),
            Int32(iterations), EVP_sha1(), Int32(length), &output)
        }
      }
    }
    return status == 1 ? output : nil
  }

  private static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  @Test("RFC 6070's test vectors")
  func rfc6070() throws {
    let vectors: [(password: String, salt: String, iterations: Int, derived: String)] = [
      ("password", "salt", 1, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
      ("password", "salt", 2, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
      ("password", "salt", 4096, "4b007901b765489abead49d926f721d065a429c1"),
      (
        "passwordPASSWORDpassword", "saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096,
        "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"
      ),
      ("pass\0word", "sa\0lt", 4096, "56fa6aa75548099dcc37d7f03425e0c3"),
    ]
    for vector in vectors {
      let derived = try Self.derive(
        Array(vector.password.utf8), Array(vector.salt.utf8), iterations: vector.iterations,
        length: vector.derived.count / 2)
      #expect(Self.hex(derived) == vector.derived, "\(vector.password) / \(vector.salt) / \(vector.iterations)")
    }
  }

  @Test("equals PKCS5_PBKDF2_HMAC for random passwords (also longer than a block), salts, counts and lengths")
  func matchesOpenSSL() throws {
    var random = SeededRandom.make(test: "PBKDF2Tests.matchesOpenSSL")
    for round in 0..<testIterations(60) {
      let password = [UInt8](random.bytes(Int.random(in: 0...(round % 3 == 0 ? 200 : 70), using: &random)))
      let salt = [UInt8](random.bytes(Int.random(in: 0...40, using: &random)))
      let iterations = Int.random(in: 1...(round % 10 == 0 ? 3000 : 50), using: &random)
      let length = Int.random(in: 1...70, using: &random)
      let expected = try #require(Self.reference(password, salt, iterations: iterations, length: length))
      let derived = try Self.derive(password, salt, iterations: iterations, length: length)
      #expect(
        derived == expected,
        "round \(round): password \(password.count) B, salt \(salt.count) B, \(iterations) iterations, \(length) B")
    }
  }
}

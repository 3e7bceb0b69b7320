import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `-` as standard input or output wherever a command takes or writes a file, byte for byte
/// on binary data (every byte value, a NUL and a lone CR included).
@Suite("'-' is standard input or output")
struct StandardStreamDashTests {
  let password = "dash-pw"

  /// Every byte value, then random bytes.
  static func binary(_ label: String) -> Data {
    var random = SeededRandom.make(test: label)
    return Data((0...255).map { UInt8($0) }) + random.bytes(200_000) + Data([0x0D])
  }

  @Test("encrypt - OUT, decrypt IN -, and both at once through standard streams")
  func encryptDecrypt() throws {
    let cask = try CaskRunner("dash-crypt")
    defer { cask.remove() }
    let plain = Self.binary("dash crypt")
    let encrypted = try cask.run(["encrypt", "-", "enc"], password: password, stdin: plain)
    #expect(encrypted.status == 0, "\(encrypted.err)")
    let message = try Data(contentsOf: URL(fileURLWithPath: cask.path("enc")))
    #expect(try RNCryptor.decrypt(message, password: password) == plain)

    let decrypted = try cask.run(["decrypt", "enc", "-"], password: password)
    #expect(decrypted.status == 0, "\(decrypted.err)")
    #expect(decrypted.stdout == plain)

    let toStdout = try cask.run(["encrypt", "-", "-"], password: password, stdin: plain)
    #expect(toStdout.status == 0, "\(toStdout.err)")
    #expect(try RNCryptor.decrypt(toStdout.stdout, password: password) == plain)
    let back = try cask.run(["decrypt", "-", "-"], password: password, stdin: toStdout.stdout)
    #expect(back.status == 0, "\(back.err)")
    #expect(back.stdout == plain)
  }

  @Test("decrypt IN - with the wrong password writes nothing to standard output")
  func decryptToStdoutAuthenticatesFirst() throws {
    let cask = try CaskRunner("dash-wrong")
    defer { cask.remove() }
    try RNCryptor.encrypt(Self.binary("dash wrong"), password: password).write(
      to: URL(fileURLWithPath: cask.path("enc")))
    let result = try cask.run(["decrypt", "enc", "-"], password: "not-it")
    #expect(result.status == 1)
    #expect(result.stdout.isEmpty)
    #expect(result.err == "Error: cannot decrypt 'enc': wrong password, or the file was modified\n")
  }

  @Test("encrypt - with --password-stdin is a usage error")
  func dashWithPasswordStdin() throws {
    let cask = try CaskRunner("dash-usage")
    defer { cask.remove() }
    let result = try cask.run(["encrypt", "-", "out", "--password-stdin"], stdin: Data("pw\n".utf8))
    #expect(result.status == 64)
    #expect(result.err.hasPrefix("Error: --password-stdin cannot be used with '-' as <in>"))
  }
}

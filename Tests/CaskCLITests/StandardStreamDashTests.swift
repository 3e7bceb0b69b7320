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

  @Test("export STORE - --format jsonl writes one object per line; binary values come back byte for byte")
  func exportJSONLinesToStdout() throws {
    let cask = try CaskRunner("dash-export")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let binary = Self.binary("dash export")
    #expect(try cask.run(["put", "s", "bin", "--file", "-"], password: password, stdin: binary).status == 0)
    let object = Data(#"{"id": "a", "n": [1, 2.50, "\u00e9"]}"#.utf8)
    #expect(try cask.run(["put", "s", "a", "--collection", "c"], password: password, stdin: object).status == 0)
    let result = try cask.run(["export", "s", "-", "--format", "jsonl"], password: password)
    #expect(result.status == 0, "\(result.err)")
    #expect(result.err == "Exported 2 values of store 's' to standard output as JSON Lines.\n")
    let lines = result.stdout.split(separator: 0x0A)
    #expect(lines.count == 2)
    var values: [String: Data] = [:]
    for line in lines {
      let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
      let key = try #require(parsed["key"] as? String)
      if let base64 = parsed["base64"] as? String { values[key] = Data(base64Encoded: base64) }
    }
    #expect(values["bin"] == binary)
    // A JSON value is written as its stored bytes.
    #expect(result.out.contains(#"{"key":"c\u0000a","collection":"c","id":"a","value":"#))
    #expect(result.stdout.range(of: object) != nil)
  }

  @Test("import STORE - reads the objects from standard input, each stored byte for byte")
  func importFromStdin() throws {
    let cask = try CaskRunner("dash-import")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let objects = [#"{"id": 1, "s": "\u0000\ud83d\ude00 "}"#, #"{ "id" : "x",  "v":1e400 }"#]
    let input = Data((objects.joined(separator: "\n") + "\n").utf8)
    let result = try cask.run(
      ["import", "s", "-", "--collection", "c", "--id-key", "id"], password: password, stdin: input)
    #expect(result.status == 0, "\(result.err)")
    #expect(try cask.run(["get", "s", "1", "--collection", "c"], password: password).stdout == Data(objects[0].utf8))
    #expect(try cask.run(["get", "s", "x", "--collection", "c"], password: password).stdout == Data(objects[1].utf8))
  }

  @Test("export STORE - without --format jsonl is a usage error")
  func exportDashNeedsJSONLines() throws {
    let cask = try CaskRunner("dash-export-usage")
    defer { cask.remove() }
    let result = try cask.run(["export", "s", "-"], password: password)
    #expect(result.status == 64)
    #expect(result.err.hasPrefix("Error: '-' (standard output) needs --format jsonl\n"))
  }
}

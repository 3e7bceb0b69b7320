import CaskTestSupport
import Foundation
import Testing

/// `cask create --kdf` and `cask passwd --kdf`: which derivation wraps the data key, seen in
/// the header's flags (Docs/FORMAT.md, section 3).
@Suite("cask create and passwd choose the key derivation")
struct KeyDerivationCommandTests {
  /// The header's flags word: 0x0003 for scrypt, 0x0001 for RNCryptor's PBKDF2, with the key
  /// ring's bit (4) and the authenticated bit (8) in a version 5 header.
  private static func flags(_ store: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: "\(store)/CASK"))[10...11])
  }

  @Test("create uses scrypt by default and RNCryptor's PBKDF2 with --kdf rncryptor; both open")
  func createChoosesTheDerivation() throws {
    let cask = try CaskRunner("kdf-create")
    defer { cask.remove() }
    let standard = try cask.createStore("standard", password: "a long password 1")
    #expect(try Self.flags(standard) == [3 | 4 | 8, 0])
    let created = try cask.run(["create", "old", "--kdf", "rncryptor"], password: "a long password 1")
    #expect(created.status == 0, "\(created.err)")
    #expect(try Self.flags(cask.path("old")) == [1 | 4 | 8, 0])
    for store in ["standard", "old"] {
      #expect(try cask.run(["put", store, "k"], password: "a long password 1", stdin: Data("v".utf8)).status == 0)
      #expect(try cask.run(["get", store, "k"], password: "a long password 1").out == "v")
      let wrong = try cask.run(["get", store, "k"], password: "another password")
      #expect(wrong.status == 1 && wrong.err == "Error: wrong password for store '\(store)'\n", "\(wrong.err)")
    }
  }

  @Test("a mistyped --kdf is a one-line usage error with a suggestion, exit 64, and creates nothing")
  func mistypedDerivation() throws {
    let cask = try CaskRunner("kdf-typo")
    defer { cask.remove() }
    let result = try cask.run(["create", "s", "--kdf", "scrpyt"], password: "a long password 1")
    #expect(result.status == 64)
    let first = result.err.split(separator: "\n").first.map(String.init) ?? ""
    #expect(
      first
        == "Error: The value 'scrpyt' is invalid for '--kdf <kdf>': expected one of 'scrypt', 'rncryptor' "
        + "(did you mean 'scrypt'?)", "\(result.err)")
    #expect(!FileManager.default.fileExists(atPath: cask.path("s")))
  }

  @Test("passwd keeps the store's derivation, and --kdf moves it")
  func passwdKeepsOrMovesTheDerivation() throws {
    let cask = try CaskRunner("kdf-passwd")
    defer { cask.remove() }
    #expect(try cask.run(["create", "s", "--kdf", "rncryptor"], password: "a long password 1").status == 0)
    let kept = try cask.run(
      ["passwd", "s", "--password-stdin", "--new-password-stdin"],
      stdin: Data("a long password 1\na long password 2\n".utf8))
    #expect(kept.status == 0, "\(kept.err)")
    // Password message (bit 0), the key ring (bit 2) and the authenticated bit (3) stay.
    #expect(try Self.flags(cask.path("s")) == [1 | 4 | 8, 0])
    let moved = try cask.run(
      ["passwd", "s", "--kdf", "scrypt", "--password-stdin", "--new-password-stdin"],
      stdin: Data("a long password 2\na long password 3\n".utf8))
    #expect(moved.status == 0, "\(moved.err)")
    #expect(try Self.flags(cask.path("s")) == [3 | 4 | 8, 0])
    #expect(try cask.run(["verify", "s"], password: "a long password 3").status == 0)
    #expect(try cask.run(["verify", "s"], password: "a long password 2").status == 1)
  }
}

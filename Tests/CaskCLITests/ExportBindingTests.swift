import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Each exported file is bound to its entry in the listing (which holds its SHA-256 and is
/// encrypted with it): `decrypt --listing` refuses a file swapped for another or replaced.
/// And an export can be made under a password of its own, never given on the command line.
@Suite("cask export: files bound to the listing, export password")
struct ExportBindingTests {
  let password = "export-binding-pw"

  /// A store with two values, exported to `out`; the listing's entries by key.
  func exported(_ cask: CaskRunner, _ more: [String] = [], environment: [String: String] = [:], stdin: Data? = nil)
    throws -> CaskResult
  {
    _ = try cask.createStore("s", password: password)
    #expect(try cask.run(["put", "s", "alpha"], password: password, stdin: Data("value-of-alpha".utf8)).status == 0)
    #expect(try cask.run(["put", "s", "beta"], password: password, stdin: Data("value-of-beta".utf8)).status == 0)
    return try cask.run(
      ["export", "s", "out"] + more, password: stdin == nil ? password : nil,
      environment: environment, stdin: stdin)
  }

  func entries(_ cask: CaskRunner, password: String) throws -> [String: [String: String]] {
    let sealed = try Data(contentsOf: URL(fileURLWithPath: cask.path("out/listing.rncryptor")))
    let listing = try #require(
      try JSONSerialization.jsonObject(with: RNCryptor.decrypt(sealed, password: password)) as? [String: Any])
    #expect(listing["version"] as? Int == 2)
    let entries = try #require(listing["entries"] as? [[String: String]])
    return Dictionary(uniqueKeysWithValues: entries.map { ($0["key"] ?? "", $0) })
  }

  @Test("two exported files swapped: decrypt --listing refuses each, and decrypts the right ones")
  func swappedFilesAreRefused() throws {
    let cask = try CaskRunner("export-swap")
    defer { cask.remove() }
    #expect(try exported(cask, ["--reuse-store-password"]).status == 0)
    let byKey = try entries(cask, password: password)
    let alpha = try #require(byKey["alpha"]?["file"])
    let beta = try #require(byKey["beta"]?["file"])
    #expect(byKey["alpha"]?["sha256"]?.count == 64)
    let listing = ["--listing", "out/listing.rncryptor"]
    let good = try cask.run(["decrypt", "out/\(alpha)", "alpha.txt"] + listing, password: password)
    #expect(good.status == 0, "\(good.err)")
    #expect(try String(contentsOfFile: cask.path("alpha.txt"), encoding: .utf8) == "value-of-alpha")

    // Swap the two files: each is still a valid message under the password.
    let a = cask.path("out/\(alpha)")
    let b = cask.path("out/\(beta)")
    #expect(rename(a, cask.path("out/tmp")) == 0 && rename(b, a) == 0 && rename(cask.path("out/tmp"), b) == 0)
    let swapped = try cask.run(["decrypt", "out/\(alpha)", "swapped.txt"] + listing, password: password)
    #expect(swapped.status == 1)
    #expect(
      swapped.err
        == "Error: 'out/\(alpha)' is not the file the listing names '\(alpha)' (its SHA-256 differs): "
        + "the export's files were swapped or replaced; nothing was written\n")
    #expect(!FileManager.default.fileExists(atPath: cask.path("swapped.txt")))
    #expect(!swapped.err.contains("value-of") && !swapped.err.contains("alpha\""))

    // Replaced by another message under the same password.
    try RNCryptor.encrypt(Data("forged".utf8), password: password).write(to: URL(fileURLWithPath: b))
    let replaced = try cask.run(["decrypt", "out/\(beta)", "forged.txt"] + listing, password: password)
    #expect(replaced.status == 1 && replaced.err.contains("is not the file the listing names"))
    // A file the listing does not name.
    try FileManager.default.copyItem(atPath: b, toPath: cask.path("out/extra.rncryptor"))
    let stranger = try cask.run(["decrypt", "out/extra.rncryptor", "x.txt"] + listing, password: password)
    #expect(stranger.status == 1 && stranger.err.contains("names no file 'extra.rncryptor'"), "\(stranger.err)")
  }

  @Test("the plaintext listing of --format json holds each file's digest too")
  func plaintextListingHoldsDigests() throws {
    let cask = try CaskRunner("export-json-digest")
    defer { cask.remove() }
    #expect(try exported(cask, ["--format", "json"]).status == 0)
    let listing = try #require(
      try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cask.path("out/listing.json"))))
        as? [String: Any])
    let entries = try #require(listing["entries"] as? [[String: String]])
    for entry in entries {
      let file = try Data(contentsOf: URL(fileURLWithPath: cask.path("out/\(entry["file"] ?? "")")))
      let digest = RNCryptor.sha256(file).map { String(format: "%02x", $0) }.joined()
      #expect(entry["sha256"] == digest)
    }
  }

  @Test("--export-password-file encrypts the files and the listing under that password, not the store's")
  func exportPasswordFromFile() throws {
    let cask = try CaskRunner("export-password")
    defer { cask.remove() }
    try Data("a separate export passphrase\n".utf8).write(to: URL(fileURLWithPath: cask.path("export-pw")))
    chmod(cask.path("export-pw"), 0o600)
    let result = try exported(cask, ["--export-password-file", "export-pw"])
    #expect(result.status == 0, "\(result.err)")
    #expect(result.out.contains("as RNCryptor v3 files under the export password"))
    let byKey = try entries(cask, password: "a separate export passphrase")
    let file = try #require(byKey["beta"]?["file"])
    let message = try Data(contentsOf: URL(fileURLWithPath: cask.path("out/\(file)")))
    #expect(try RNCryptor.decrypt(message, password: "a separate export passphrase") == Data("value-of-beta".utf8))
    #expect(throws: (any Error).self) { try RNCryptor.decrypt(message, password: password) }
  }

  @Test("the export password from the second line of standard input or from CASK_EXPORT_PASSWORD")
  func exportPasswordFromStdinAndEnvironment() throws {
    let viaStdin = try CaskRunner("export-password-stdin")
    defer { viaStdin.remove() }
    let stdin = try exported(
      viaStdin, ["--password-stdin", "--export-password-stdin"], stdin: Data("\(password)\nline-two-export-pw\n".utf8))
    #expect(stdin.status == 0, "\(stdin.err)")
    #expect(try entries(viaStdin, password: "line-two-export-pw").count == 2)

    let viaEnvironment = try CaskRunner("export-password-env")
    defer { viaEnvironment.remove() }
    let environment = try exported(viaEnvironment, environment: ["CASK_EXPORT_PASSWORD": "env-export-pw"])
    #expect(environment.status == 0, "\(environment.err)")
    #expect(try entries(viaEnvironment, password: "env-export-pw").count == 2)
  }

  @Test("--export-password on the command line is refused without echoing what follows it")
  func exportPasswordArgumentIsRefused() throws {
    let cask = try CaskRunner("export-password-argv")
    defer { cask.remove() }
    let result = try cask.run(["export", "s", "out", "--export-password", "argv-secret-5e"], password: password)
    #expect(result.status == 64)
    #expect(
      result.err.hasPrefix("Error: Passwords are never taken as command-line arguments; use --export-password-file"))
    #expect(!result.err.contains("argv-secret-5e"))
    let plaintext = try cask.run(
      ["export", "s", "out", "--format", "json", "--export-password-prompt"], password: password)
    #expect(plaintext.status == 64 && plaintext.err.contains("an export password is for --format rncryptor"))
  }
}

import CaskTestSupport
import Foundation
import Testing

/// `create` and `passwd` warn about a short or common new password (a warning, not a
/// refusal), never showing it; `--accept-weak-password` leaves the warning out.
@Suite("cask create and passwd: weak password warnings")
struct WeakPasswordTests {
  static let warningStart = "warning: the new password is weak ("

  @Test(
    "create warns about a short, common or repeated password, and creates the store",
    arguments: [
      ("short-pw", "shorter than 12 characters"), ("Password1234!", "a common password"),
      ("qwertyqwertyqwerty", "a common password"), ("123456789012345", "a common password"),
      ("zzzzzzzzzzzzzz", "one character repeated"),
    ])
  func createWarns(password: String, reason: String) throws {
    let cask = try CaskRunner("weak-create")
    defer { cask.remove() }
    let result = try cask.run(["create", "s"], password: password)
    #expect(result.status == 0, "\(result.err)")
    #expect(result.err.hasPrefix(Self.warningStart + reason + "): "), "\(result.err)")
    #expect(result.err.hasSuffix("\nCreated store 's'.\n"))
    #expect(!result.err.contains(password))
    #expect(try cask.run(["keys", "s"], password: password).status == 0)
  }

  @Test("a long uncommon password gets no warning, and --accept-weak-password silences it")
  func noWarning() throws {
    let cask = try CaskRunner("strong-create")
    defer { cask.remove() }
    let strong = try cask.run(["create", "s"], password: "violet tractor humming lantern")
    #expect(strong.status == 0 && strong.err == "Created store 's'.\n", "\(strong.err)")
    let accepted = try cask.run(["create", "t", "--accept-weak-password"], password: "short")
    #expect(accepted.status == 0 && accepted.err == "Created store 't'.\n", "\(accepted.err)")
  }

  @Test("passwd warns about the new password only")
  func passwdWarns() throws {
    let cask = try CaskRunner("weak-passwd")
    defer { cask.remove() }
    _ = try cask.run(["create", "s", "--accept-weak-password"], password: "old")
    let weak = try cask.run(["passwd", "s"], password: "old", environment: ["CASK_NEW_PASSWORD": "letmein2024"])
    #expect(weak.status == 0, "\(weak.err)")
    #expect(weak.err.hasPrefix(Self.warningStart + "a common password): "), "\(weak.err)")
    #expect(weak.err.hasSuffix("\nChanged the password of store 's'.\n") && !weak.err.contains("letmein2024"))
    let strong = try cask.run(
      ["passwd", "s"], password: "letmein2024", environment: ["CASK_NEW_PASSWORD": "orbit saffron kettle meadow"])
    #expect(strong.status == 0 && strong.err == "Changed the password of store 's'.\n", "\(strong.err)")
  }
}

import CaskTestSupport
import Foundation
import Testing

/// `cask token` and `cask verify --expect-token`: a store put back as a whole from an older
/// copy is refused against a token taken later.
@Suite("Integrity tokens from the command line")
struct TokenCommandTests {
  let password = "s3cret-Password"

  func token(_ cask: CaskRunner, _ store: String) throws -> String {
    let result = try cask.run(["token", store], password: password)
    #expect(result.status == 0, "\(result.err)")
    let token = result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(!token.isEmpty && !token.contains("\n"))
    return token
  }

  @Test("verify --expect-token accepts the token's state and later ones, and refuses an older copy")
  func olderCopyIsRefused() throws {
    let cask = try CaskRunner("token-rollback")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    #expect(try cask.run(["put", "s", "k1"], password: password, stdin: Data("v1".utf8)).status == 0)
    let early = try token(cask, "s")
    try FileManager.default.copyItem(atPath: cask.path("s"), toPath: cask.path("old"))
    #expect(try cask.run(["delete", "s", "k1"], password: password).status == 0)
    let late = try token(cask, "s")
    #expect(late != early)

    let same = try cask.run(["verify", "s", "--expect-token", late], password: password)
    #expect(same.status == 0, "\(same.err)")
    let later = try cask.run(["verify", "s", "--expect-token", early], password: password)
    #expect(later.status == 0, "\(later.err)")

    let rolledBack = try cask.run(["verify", "old", "--expect-token", late], password: password)
    #expect(rolledBack.status == 1)
    #expect(rolledBack.err.contains("older than the integrity token"), "\(rolledBack.err)")
    #expect(!rolledBack.err.contains(late))
  }

  @Test("a token that is not the store's makes verify exit 1 without printing it")
  func foreignTokenIsRefused() throws {
    let cask = try CaskRunner("token-foreign")
    defer { cask.remove() }
    _ = try cask.createStore("a", password: password)
    _ = try cask.createStore("b", password: password)
    let other = try token(cask, "b")
    for candidate in [other, "not-a-token"] {
      let result = try cask.run(["verify", "a", "--expect-token", candidate], password: password)
      #expect(result.status == 1, "\(result.err)")
      #expect(result.err.contains("does not match the integrity token"), "\(result.err)")
      #expect(!result.err.contains(candidate))
    }
  }

  @Test("verify --json reports whether the store is fresh")
  func jsonReportsFreshness() throws {
    let cask = try CaskRunner("token-json")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let current = try token(cask, "s")
    let result = try cask.run(["verify", "s", "--expect-token", current, "--json"], password: password)
    #expect(result.status == 0, "\(result.err)")
    let report = try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any]
    #expect(report?["fresh"] as? Bool == true)
    #expect(report?["clean"] as? Bool == true)
  }
}

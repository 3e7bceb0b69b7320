import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `cask upgrade STORE`: a version 2 store becomes version 5 in place; a current store is left
/// alone; an open store is refused.
@Suite("cask upgrade")
struct UpgradeCommandTests {
  private static func version(_ store: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: "\(store)/CASK"))[8...9])
  }

  @Test("a version 2 store is upgraded with every value; a second run says there is nothing to do")
  func upgradesOnce() throws {
    let cask = try CaskRunner("upgrade")
    defer { cask.remove() }
    let store = try cask.createVersion2Store("s", password: "pw-upgrade")
    for index in 0..<5 {
      #expect(
        try cask.run(["put", "s", "k\(index)"], password: "pw-upgrade", stdin: Data("v\(index)".utf8)).status == 0)
    }
    #expect(try Self.version(store) == [2, 0])
    let result = try cask.run(["upgrade", "s"], password: "pw-upgrade")
    #expect(result.status == 0, "\(result.err)")
    #expect(result.err == "Upgraded store 's' from format version 2 to 5: 5 keys copied.\n", "\(result.err)")
    #expect(result.out.isEmpty)
    #expect(try Self.version(store) == [5, 0])
    for index in 0..<5 {
      #expect(try cask.run(["get", "s", "k\(index)"], password: "pw-upgrade").out == "v\(index)")
    }
    #expect(try cask.run(["verify", "s"], password: "pw-upgrade").status == 0)
    let hidden = try FileManager.default.contentsOfDirectory(atPath: cask.path("")).filter { $0.hasPrefix(".") }
    #expect(hidden.isEmpty, "\(hidden)")

    let again = try cask.run(["upgrade", "s", "--json"], password: "pw-upgrade")
    #expect(again.status == 0, "\(again.err)")
    let report = try JSONSerialization.jsonObject(with: again.stdout) as? [String: Any]
    #expect(report?["upgraded"] as? Bool == false)
    #expect(report?["version"] as? Int == 5)
  }

  @Test("a wrong password fails with exit 1 and leaves the store at version 2")
  func wrongPassword() throws {
    let cask = try CaskRunner("upgrade-wrong")
    defer { cask.remove() }
    let store = try cask.createVersion2Store("s", password: "pw-upgrade")
    let result = try cask.run(["upgrade", "s"], password: "not it")
    #expect(result.status == 1)
    #expect(result.err == "Error: wrong password for store 's'\n", "\(result.err)")
    #expect(try Self.version(store) == [2, 0])
  }

  @Test("a store held open by another process is refused as locked")
  func lockedStore() throws {
    let cask = try CaskRunner("upgrade-locked")
    defer { cask.remove() }
    let store = try cask.createVersion2Store("s", password: "pw-upgrade")
    // This process holds the store open for writing; the cask process is another one.
    var options = CaskStore.Options(durability: .never)
    options.createIfMissing = false
    let holder = try CaskStore(path: store, password: "pw-upgrade", options: options)
    defer { try? holder.close() }
    let result = try cask.run(["upgrade", "s"], password: "pw-upgrade")
    #expect(result.status == 1)
    #expect(result.err == "Error: store 's' is locked: another process has it open\n", "\(result.err)")
    #expect(try Self.version(store) == [2, 0])
  }

  @Test("cask help upgrade prints its sections")
  func help() throws {
    let cask = try CaskRunner("upgrade-help")
    defer { cask.remove() }
    let result = try cask.run(["help", "upgrade"])
    #expect(result.status == 0)
    for section in ["OVERVIEW:", "USAGE: cask upgrade", "ARGUMENTS:", "OPTIONS:"] {
      #expect(result.out.contains(section), "\(section)")
    }
  }
}

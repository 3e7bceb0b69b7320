import CaskTestSupport
import Foundation
import Testing

/// `cask rekey STORE DIR`: a new store under a new password that holds every key and value,
/// and that the old password does not open.
@Suite("cask rekey")
struct RekeyCommandTests {
  @Test("the copy opens with the new password only and holds every value; an existing DIR is refused first")
  func rekeyRoundTrip() throws {
    let cask = try CaskRunner("rekey")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: "old-pw")
    var random = SeededRandom.make(test: "cli rekey round trip")
    var values: [String: Data] = [:]
    for index in 0..<12 {
      let value = random.bytes(Int.random(in: 0...3000, using: &random))
      values["key-\(index)"] = value
      #expect(try cask.run(["put", "s", "key-\(index)"], password: "old-pw", stdin: value).status == 0)
    }
    let rekey = try cask.run(
      ["rekey", "s", "fresh", "--password-stdin", "--new-password-stdin"], stdin: Data("old-pw\nnew-pw\n".utf8))
    #expect(rekey.status == 0, "\(rekey.err)")
    #expect(rekey.out.hasPrefix("Copied store 's' into 'fresh' under a new data key: 12 keys, "), "\(rekey.out)")
    for (key, value) in values {
      #expect(try cask.run(["get", "fresh", key], password: "new-pw").stdout == value, "\(key)")
    }
    let old = try cask.run(["get", "fresh", "key-0"], password: "old-pw")
    #expect(old.status == 1 && old.err == "Error: wrong password for store 'fresh'\n", "\(old.err)")
    #expect(try cask.run(["verify", "fresh"], password: "new-pw").status == 0)
    #expect(
      try cask.run(["get", "s", "key-0"], password: "old-pw").stdout == values["key-0"], "the store is as it was")
    let again = try cask.run(["rekey", "s", "fresh"], password: "old-pw")
    #expect(again.status == 1 && again.err == "Error: 'fresh' already exists\n", "\(again.err)")
    let hidden = try FileManager.default.contentsOfDirectory(atPath: cask.path("")).filter { $0.contains(".rekey-") }
    #expect(hidden.isEmpty, "no hidden directory left: \(hidden)")
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// The success paths of the store commands, and the exactness of what goes in and out.
@Suite("cask store commands")
struct StoreCommandTests {
  let password = "correct horse battery"

  @Test("put then get returns random binary data byte for byte, from --file and from stdin")
  func binaryRoundTrip() throws {
    let cask = try CaskRunner("binary")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    var random = SeededRandom.make(test: "cli binary round trip")
    let fromFile = random.bytes(300_000)
    let fromStdin = random.bytes(70_000) + Data([0, 10, 13, 0xFF, 0])
    try fromFile.write(to: URL(fileURLWithPath: cask.path("value.bin")))

    let put1 = try cask.run(["put", "s", "file-key", "--file", "value.bin"], password: password)
    #expect(put1.status == 0 && put1.stdout.isEmpty && put1.stderr.isEmpty, "\(put1.err)")
    let put2 = try cask.run(["put", "s", "stdin-key"], password: password, stdin: fromStdin)
    #expect(put2.status == 0, "\(put2.err)")
    let empty = try cask.run(["put", "s", "empty"], password: password, stdin: Data())
    #expect(empty.status == 0)

    let get1 = try cask.run(["get", "s", "file-key"], password: password)
    #expect(get1.status == 0 && get1.stderr.isEmpty)
    #expect(get1.stdout == fromFile)
    #expect(try cask.run(["get", "s", "stdin-key"], password: password).stdout == fromStdin)
    let getEmpty = try cask.run(["get", "s", "empty"], password: password)
    #expect(getEmpty.status == 0 && getEmpty.stdout.isEmpty)
  }

  @Test("create, keys (text, --prefix, --json, --collection), delete, stats, verify, compact")
  func storeLifecycle() throws {
    let cask = try CaskRunner("lifecycle")
    defer { cask.remove() }
    let created = try cask.run(["create", "s", "--accept-weak-password"], password: password)
    #expect(created.status == 0)
    #expect(created.err == "Created store 's'.\n")
    let again = try cask.run(["create", "s"], password: password)
    #expect(again.status == 1 && again.err == "Error: store 's' already exists\n")

    for key in ["apple", "apricot", "banana"] {
      #expect(try cask.run(["put", "s", key], password: password, stdin: Data(key.utf8)).status == 0)
    }
    #expect(
      try cask.run(["put", "s", "e1", "--collection", "events"], password: password, stdin: Data("{}".utf8)).status == 0
    )
    // A U+0000 cannot travel in an argument: --collection builds the key.
    #expect(try cask.run(["get", "s", "e1", "--collection", "events"], password: password).out == "{}")

    #expect(try cask.run(["keys", "s"], password: password).out == "apple\napricot\nbanana\nevents\\0e1\n")
    #expect(try cask.run(["keys", "s", "--prefix", "ap"], password: password).out == "apple\napricot\n")
    #expect(try cask.run(["keys", "s", "--collection", "events"], password: password).out == "e1\n")
    let json = try cask.run(["keys", "s", "--json"], password: password)
    #expect(
      try JSONDecoder().decode([String].self, from: json.stdout) == ["apple", "apricot", "banana", "events\u{0}e1"])

    let deleted = try cask.run(["delete", "s", "banana"], password: password)
    #expect(deleted.status == 0 && deleted.stdout.isEmpty && deleted.stderr.isEmpty)
    let deletedAgain = try cask.run(["delete", "s", "banana"], password: password)
    #expect(deletedAgain.status == 1)
    #expect(deletedAgain.err == "Error: no value for that key in store 's'\n")
    let missing = try cask.run(["get", "s", "banana"], password: password)
    #expect(missing.status == 1 && missing.stdout.isEmpty)

    let stats = try cask.run(["stats", "s", "--json"], password: password)
    #expect(stats.status == 0)
    let figures = try #require(try JSONSerialization.jsonObject(with: stats.stdout) as? [String: Any])
    #expect(figures["keys"] as? Int == 3)
    #expect((figures["collections"] as? [String: Int]) == ["events": 1])
    #expect((figures["deadBytes"] as? Int ?? 0) > 0)
    #expect(figures["segments"] as? Int == 1)
    #expect((figures["recovery"] as? [String: Any])?["clean"] as? Bool == true)
    let statsText = try cask.run(["stats", "s"], password: password)
    #expect(statsText.out.contains("Keys:         3\n"))
    #expect(statsText.out.contains("  events: 1 object\n"))

    let verify = try cask.run(["verify", "s"], password: password)
    #expect(verify.status == 0)
    #expect(verify.out.contains("no damage"))
    let verifyJSON = try cask.run(["verify", "s", "--json"], password: password)
    let report = try #require(try JSONSerialization.jsonObject(with: verifyJSON.stdout) as? [String: Any])
    #expect(report["clean"] as? Bool == true)
    #expect((report["recordsChecked"] as? Int ?? 0) >= 5)

    let compact = try cask.run(["compact", "s"], password: password)
    #expect(compact.status == 0)
    #expect(compact.out.hasPrefix("Compacted store 's': 1 segment"))
    let after = try cask.run(["stats", "s", "--json"], password: password)
    let afterFigures = try #require(try JSONSerialization.jsonObject(with: after.stdout) as? [String: Any])
    #expect(afterFigures["deadBytes"] as? Int == 0)
    #expect(try cask.run(["get", "s", "apricot"], password: password).out == "apricot")
    // Nothing of a value or key appears in any message.
    #expect(!compact.err.contains("apricot") && !statsText.out.contains("apricot"))
  }

  @Test("passwd reports the records still under an old key; after compact the old password opens nothing")
  func passwdReportsOlderKeyRecords() throws {
    let cask = try CaskRunner("passwd-epochs")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: "old pass phrase one")
    for key in ["a", "b", "c"] {
      #expect(try cask.run(["put", "s", key], password: "old pass phrase one", stdin: Data("v".utf8)).status == 0)
    }
    try FileManager.default.copyItem(atPath: cask.path("s/CASK"), toPath: cask.path("old-header"))
    let changed = try cask.run(
      ["passwd", "s", "--json"], password: "old pass phrase one",
      environment: ["CASK_NEW_PASSWORD": "new pass phrase two"])
    #expect(changed.status == 0, "\(changed.err)")
    #expect(changed.out.contains("\"olderRecords\" : 3"), "\(changed.out)")
    #expect(changed.out.contains("\"keyEpoch\" : 1"), "\(changed.out)")
    let before = try cask.run(["stats", "s"], password: "new pass phrase two")
    #expect(before.out.contains("Key epoch:    1; 3 records (612 B) still under an older key"), "\(before.out)")
    let verified = try cask.run(["verify", "s"], password: "new pass phrase two")
    #expect(verified.status == 0, "\(verified.err)")
    #expect(verified.out.contains("  Key epoch 1; 3 records (612 B) still under an older key"), "\(verified.out)")
    let verifiedJSON = try cask.run(["verify", "s", "--json"], password: "new pass phrase two")
    #expect(verifiedJSON.out.contains("\"olderKeyRecords\" : 3"), "\(verifiedJSON.out)")
    #expect(verifiedJSON.out.contains("\"keyEpoch\" : 1"), "\(verifiedJSON.out)")
    let compacted = try cask.run(["compact", "s"], password: "new pass phrase two")
    #expect(compacted.status == 0, "\(compacted.err)")
    let after = try cask.run(["stats", "s"], password: "new pass phrase two")
    #expect(after.out.contains("Key epoch:    1\n"), "\(after.out)")
    #expect(try !cask.run(["verify", "s"], password: "new pass phrase two").out.contains("Key epoch"))
    let again = try cask.run(
      ["passwd", "s"], password: "new pass phrase two", environment: ["CASK_NEW_PASSWORD": "third pass phrase"])
    #expect(
      again.err == "Changed the password of store 's'.\n3 records (612 B) are still under an old key, which an old "
        + "copy of the header opens with its password; 'cask compact s' seals them again under the new one.\n",
      "\(again.err)")
    #expect(try cask.run(["compact", "s"], password: "third pass phrase").status == 0)
    // The first header, put back: its password opens nothing.
    try FileManager.default.removeItem(atPath: cask.path("s/CASK"))
    try FileManager.default.copyItem(atPath: cask.path("old-header"), toPath: cask.path("s/CASK"))
    let old = try cask.run(["get", "s", "a"], password: "old pass phrase one")
    #expect(old.status != 0 && old.out.isEmpty, "\(old.out) \(old.err)")
  }

  @Test("passwd changes the password: old sources for the current one, new sources for the new one")
  func changePassword() throws {
    let cask = try CaskRunner("passwd")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: "old")
    #expect(try cask.run(["put", "s", "k"], password: "old", stdin: Data("v".utf8)).status == 0)

    let viaStdin = try cask.run(
      ["passwd", "s", "--password-stdin", "--new-password-stdin", "--accept-weak-password"],
      stdin: Data("old\nnewer\n".utf8))
    #expect(viaStdin.status == 0, "\(viaStdin.err)")
    #expect(
      viaStdin.err
        == "Changed the password of store 's'.\n1 record (204 B) is still under an old key, which an old copy of "
        + "the header opens with its password; 'cask compact s' seals it again under the new one.\n",
      "\(viaStdin.err)")
    #expect(try cask.run(["get", "s", "k"], password: "old").status == 1)
    #expect(try cask.run(["get", "s", "k"], password: "newer").out == "v")

    // The options win over an exported CASK_PASSWORD. Prevents the variable being taken as
    // the current password and line 1 becoming the new one, silently.
    let overEnvironment = try cask.run(
      ["passwd", "s", "--password-stdin", "--new-password-stdin"], password: "newer",
      stdin: Data("newer\nstdin-new\n".utf8))
    #expect(overEnvironment.status == 0, "\(overEnvironment.err)")
    #expect(try cask.run(["get", "s", "k"], password: "stdin-new").out == "v")
    #expect(try cask.run(["get", "s", "k"], password: "newer").status == 1)
    let back = try cask.run(
      ["passwd", "s", "--new-password-stdin"], password: "stdin-new", stdin: Data("newer\n".utf8))
    #expect(back.status == 0, "\(back.err)")

    try Data("newest\n".utf8).write(to: URL(fileURLWithPath: cask.path("new.txt")))
    let viaFileAndEnvironment = try cask.run(
      ["passwd", "s", "--new-password-file", "new.txt"], password: "newer")
    #expect(viaFileAndEnvironment.status == 0)
    let viaEnvironment = try cask.run(
      ["passwd", "s"], password: "newest", environment: ["CASK_NEW_PASSWORD": "last"])
    #expect(viaEnvironment.status == 0)
    #expect(try cask.run(["get", "s", "k"], password: "last").out == "v")

    let noNewPassword = try cask.run(["passwd", "s"], password: "last")
    #expect(noNewPassword.status == 1)
    #expect(noNewPassword.err.contains("no password"))
    #expect(try cask.run(["get", "s", "k"], password: "last").out == "v")
  }

  @Test("password sources apply in order: --password-file, --password-stdin, CASK_PASSWORD")
  func passwordSourceOrder() throws {
    let cask = try CaskRunner("sources")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: "right")
    #expect(try cask.run(["put", "s", "k"], password: "right", stdin: Data("v".utf8)).status == 0)
    try Data("right\r\nignored second line\n".utf8).write(to: URL(fileURLWithPath: cask.path("pw.txt")))
    try Data("wrong\n".utf8).write(to: URL(fileURLWithPath: cask.path("bad.txt")))

    #expect(try cask.run(["get", "s", "k", "--password-file", "pw.txt"], password: "wrong").out == "v")
    #expect(try cask.run(["get", "s", "k", "--password-file", "bad.txt"], password: "right").status == 1)
    #expect(
      try cask.run(["get", "s", "k", "--password-stdin"], password: "wrong", stdin: Data("right\n".utf8)).out == "v")
    #expect(
      try cask.run(["get", "s", "k", "--password-stdin"], password: "right", stdin: Data("wrong\n".utf8)).status == 1)
    #expect(try cask.run(["get", "s", "k", "--password-stdin"], stdin: Data("right\n".utf8)).out == "v")
    let empty = try cask.run(["get", "s", "k", "--password-stdin"], stdin: Data())
    #expect(empty.status == 1 && empty.err.contains("standard input is empty"))
  }

  /// Prevents a help text that gives another order than the code follows.
  @Test("the help states the password order the code uses (--password-stdin before CASK_PASSWORD)")
  func helpStatesPasswordOrder() throws {
    let cask = try CaskRunner("help-order")
    defer { cask.remove() }
    try cask.run(["create", "s"], password: "help-order-pw")
    // The behaviour: with both, standard input wins.
    let got = try cask.run(
      ["keys", "s", "--password-stdin"], password: "wrong-password", stdin: Data("help-order-pw\n".utf8))
    #expect(got.status == 0, "\(got.err)")
    for command in [["--help"], ["passwd", "--help"]] {
      let help = try cask.run(command).out.replacingOccurrences(of: "\n", with: " ")
      let env = try #require(help.range(of: "CASK_PASSWORD"))
      let stdin = try #require(help.range(of: "--password-stdin"))
      #expect(stdin.lowerBound < env.lowerBound, "cask \(command.joined(separator: " ")) says: \(help.prefix(400))")
    }
  }

  /// ExportFiles makes DIR with intermediate directories, but removeAll() only removes DIR.

  @Test("a password line ending in a lone CR means the same from --password-file and --password-stdin")
  func passwordCarriageReturnIsReadAlikeEverywhere() throws {
    let cask = try CaskRunner("password-cr")
    defer { cask.remove() }
    try Data("pw-with-cr\r".utf8).write(to: URL(fileURLWithPath: cask.path("pw")))
    let created = try cask.run(["create", "s", "--password-file", "pw"])
    #expect(created.status == 0, "\(created.err)")
    #expect(try cask.run(["put", "s", "k", "--file", "pw", "--password-file", "pw"]).status == 0)
    let fromStdin = try cask.run(["get", "s", "k", "--password-stdin"], stdin: Data("pw-with-cr\r".utf8))
    #expect(fromStdin.status == 0, "\(fromStdin.err)")
  }
}

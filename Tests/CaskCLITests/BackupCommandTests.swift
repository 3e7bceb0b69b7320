import CaskTestSupport
import Foundation
import Testing

/// `cask backup STORE DIR`: a copy that `cask` opens with the same password and that holds
/// every key and value; a destination that would mix files is refused before anything is
/// asked or written.
@Suite("cask backup")
struct BackupCommandTests {
  let password = "backup-pw"

  @Test("the copy holds every key and value, with the same password, and goes its own way")
  func copyRoundTrip() throws {
    let cask = try CaskRunner("backup")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    var random = SeededRandom.make(test: "cli backup round trip")
    var values: [String: Data] = [:]
    for index in 0..<20 {
      let value = random.bytes(Int.random(in: 0...5000, using: &random))
      values["key-\(index)"] = value
      #expect(try cask.run(["put", "s", "key-\(index)"], password: password, stdin: value).status == 0)
    }
    #expect(try cask.run(["delete", "s", "key-3"], password: password).status == 0)
    values["key-3"] = nil
    let backup = try cask.run(["backup", "s", "copies/b"], password: password)
    #expect(backup.status == 0, "\(backup.err)")
    #expect(backup.out.hasPrefix("Backed up store 's' into 'copies/b': "), "\(backup.out)")
    #expect(
      try cask.run(["keys", "copies/b"], password: password).out == values.keys.sorted().map { $0 + "\n" }.joined())
    for (key, value) in values {
      #expect(try cask.run(["get", "copies/b", key], password: password).stdout == value, "\(key)")
    }
    #expect(try cask.run(["verify", "copies/b"], password: password).status == 0)
    #expect(try cask.run(["get", "copies/b", "key-0"], password: "wrong").status == 1)
    #expect(try cask.run(["put", "copies/b", "new"], password: password, stdin: Data("x".utf8)).status == 0)
    #expect(
      try cask.run(["get", "s", "new"], password: password).status == 1, "the original does not see the copy's writes")
  }

  @Test("a file or a directory with files in it is refused with one line and left as it was")
  func destinationRefused() throws {
    let cask = try CaskRunner("backup-refused")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    try FileManager.default.createDirectory(atPath: cask.path("full"), withIntermediateDirectories: true)
    try Data("mine".utf8).write(to: URL(fileURLWithPath: cask.path("full/notes.txt")))
    try Data("file".utf8).write(to: URL(fileURLWithPath: cask.path("plain")))
    for destination in ["full", "plain", "s"] {
      let result = try cask.run(["backup", "s", destination], password: password)
      #expect(result.status == 1, "\(destination)")
      #expect(result.err == "Error: '\(destination)' already exists and is not an empty directory\n", "\(result.err)")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: cask.path("full")) == ["notes.txt"])
    #expect(try Data(contentsOf: URL(fileURLWithPath: cask.path("plain"))) == Data("file".utf8))
    for (destination, message) in [
      ("", "Error: the destination is an empty path\n"),
      ("s/inner", "Error: 's/inner' is inside store 's'; put the copy elsewhere\n"),
    ] {
      for command in ["backup", "rekey"] {
        // No password given: refused before one is asked for.
        let result = try cask.run([command, "s", destination])
        #expect(result.status == 1 && result.err == message, "\(command) '\(destination)': \(result.err)")
      }
    }
    #expect(!FileManager.default.fileExists(atPath: cask.path("s/inner")))
    // A path with a line break and an escape in it: the message stays one line.
    try FileManager.default.createDirectory(atPath: cask.path("bad\ndir\u{1b}"), withIntermediateDirectories: true)
    try Data("x".utf8).write(to: URL(fileURLWithPath: cask.path("bad\ndir\u{1b}/x")))
    let odd = try cask.run(["backup", "s", "bad\ndir\u{1b}"], password: password)
    #expect(odd.status == 1)
    #expect(odd.err == "Error: 'bad\\ndir\\u{1b}' already exists and is not an empty directory\n", "\(odd.err)")
    let missing = try cask.run(["backup", "nothing-here", "b"], password: password)
    #expect(missing.status == 1 && missing.err.split(separator: "\n").count == 1, "\(missing.err)")
    #expect(!FileManager.default.fileExists(atPath: cask.path("b")))
  }
}

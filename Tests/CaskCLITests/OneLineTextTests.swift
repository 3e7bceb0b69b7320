import CaskTestSupport
import Foundation
import Testing

/// Keys and paths in text output: every line the tool prints stays one line on a terminal,
/// whatever a key or a path holds (C1 controls, U+2028/U+2029, line breaks).
@Suite("cask one-line text")
struct OneLineTextTests {
  let password = "one-line-pw"

  @Test("keys escapes C1 controls and the Unicode line and paragraph separators")
  func keysEscapeC1AndSeparators() throws {
    let cask = try CaskRunner("keys-c1")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    for key in ["a\u{85}b", "c\u{2028}d", "e\u{9b}31mred", "f\u{2029}g"] {
      let put = try cask.run(["put", "s", key], password: password, stdin: Data("v".utf8))
      #expect(put.status == 0, "\(put.err)")
    }
    let keys = try cask.run(["keys", "s"], password: password)
    #expect(keys.status == 0)
    #expect(keys.out == "a\\u{85}b\nc\\u{2028}d\ne\\u{9b}31mred\nf\\u{2029}g\n")
  }

  @Test("create's confirmation names a path with a line break on one line")
  func createConfirmationIsOneLine() throws {
    let cask = try CaskRunner("create-newline")
    defer { cask.remove() }
    let created = try cask.run(["create", "a\nb", "--accept-weak-password"], password: password)
    #expect(created.status == 0)
    #expect(created.err == "Created store 'a\\nb'.\n")
  }

  @Test("the damage warning names a store path with a line break on one line")
  func damageWarningIsOneLine() throws {
    let cask = try CaskRunner("warning-newline")
    defer { cask.remove() }
    let store = try cask.createVersion2Store("d\nx", password: password)
    let put = try cask.run(["put", "d\nx", "k"], password: password, stdin: Data("v".utf8))
    #expect(put.status == 0)
    let segment = try FileHandle(forWritingTo: URL(fileURLWithPath: store + "/00000001.seg"))
    try segment.seekToEnd()
    try segment.write(contentsOf: Data(repeating: 0xA5, count: 40))
    try segment.close()
    let get = try cask.run(["get", "d\nx", "k"], password: password)
    #expect(get.status == 0)
    #expect(get.err.hasPrefix("warning: store 'd\\nx' "), "\(get.err)")
    #expect(get.err.filter { $0 == "\n" }.count == 1, "\(get.err)")
  }

  @Test("export's NOT-encrypted warning names a directory with a line break on one line")
  func exportWarningIsOneLine() throws {
    let cask = try CaskRunner("export-newline")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    _ = try cask.run(["put", "s", "k"], password: password, stdin: Data("{}".utf8))
    let exported = try cask.run(["export", "s", "out\ndir", "--format", "json"], password: password)
    #expect(exported.status == 0, "\(exported.err)")
    #expect(exported.err.hasPrefix("warning: the files in 'out\\ndir' are NOT encrypted"), "\(exported.err)")
    #expect(exported.err.filter { $0 == "\n" }.count == 1)
    #expect(exported.out.filter { $0 == "\n" }.count == 1, "\(exported.out)")
  }

  @Test("decrypt to a missing directory names OUT as typed, not the hidden temporary file")
  func decryptErrorNamesOut() throws {
    let cask = try CaskRunner("decrypt-nodir")
    defer { cask.remove() }
    try Data("plain".utf8).write(to: URL(fileURLWithPath: cask.path("plain")))
    #expect(try cask.run(["encrypt", "plain", "sealed"], password: password).status == 0)
    let decrypted = try cask.run(["decrypt", "sealed", "nodir/x"], password: password)
    #expect(decrypted.status == 1)
    #expect(decrypted.err == "Error: cannot write 'nodir/x': No such file or directory\n")
    let encrypted = try cask.run(["encrypt", "plain", "nodir/y"], password: password)
    #expect(encrypted.status == 1)
    #expect(encrypted.err == "Error: cannot write 'nodir/y': No such file or directory\n")
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// OUT of `encrypt` and `decrypt` as a symbolic link: `--force` writes the file it names
/// (the link stays a link), a link to nothing is refused, and a device is written in place.
/// Only links the test makes in its own directory are used.
@Suite("encrypt and decrypt write through links, never over them")
struct OutputLinkTests {
  let password = "link-pw"

  @Test("decrypt and encrypt --force through a link replace the file it names and keep the link")
  func forceWritesThroughLink() throws {
    let cask = try CaskRunner("output-link")
    defer { cask.remove() }
    var random = SeededRandom.make(test: "output link")
    let plain = random.bytes(70_000)
    try plain.write(to: URL(fileURLWithPath: cask.path("plain")))
    #expect(try cask.run(["encrypt", "plain", "enc"], password: password).status == 0)
    try Data("old".utf8).write(to: URL(fileURLWithPath: cask.path("target")))
    try FileManager.default.createSymbolicLink(atPath: cask.path("link"), withDestinationPath: "target")

    let refused = try cask.run(["decrypt", "enc", "link"], password: password)
    #expect(refused.status == 1)
    #expect(refused.err == "Error: 'link' already exists (pass --force to replace it)\n")

    let forced = try cask.run(["decrypt", "enc", "link", "--force"], password: password)
    #expect(forced.status == 0, "\(forced.err)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: cask.path("link")) == "target")
    #expect(try Data(contentsOf: URL(fileURLWithPath: cask.path("target"))) == plain)

    let encrypted = try cask.run(["encrypt", "plain", "link", "--force"], password: password)
    #expect(encrypted.status == 0, "\(encrypted.err)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: cask.path("link")) == "target")
    let message = try Data(contentsOf: URL(fileURLWithPath: cask.path("target")))
    #expect(try RNCryptor.decrypt(message, password: password) == plain)
  }

  @Test("a link to nothing is refused with a message, and nothing is made")
  func danglingLinkRefused() throws {
    let cask = try CaskRunner("output-dangling")
    defer { cask.remove() }
    try Data("x".utf8).write(to: URL(fileURLWithPath: cask.path("plain")))
    try FileManager.default.createSymbolicLink(atPath: cask.path("link"), withDestinationPath: "missing")
    let result = try cask.run(["encrypt", "plain", "link", "--force"], password: password)
    #expect(result.status == 1)
    #expect(
      result.err
        == "Error: 'link' is a symbolic link to nothing: give the path of the file to write, not the link\n")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: cask.path("link")) == "missing")
    #expect(!FileManager.default.fileExists(atPath: cask.path("missing")))
  }

  @Test("a link to a device is written in place: /dev/null through a link stays a device")
  func linkToDeviceIsAStream() throws {
    let cask = try CaskRunner("output-device")
    defer { cask.remove() }
    try Data("x".utf8).write(to: URL(fileURLWithPath: cask.path("plain")))
    try FileManager.default.createSymbolicLink(atPath: cask.path("null"), withDestinationPath: "/dev/null")
    let result = try cask.run(["encrypt", "plain", "null", "--force"], password: password)
    #expect(result.status == 0, "\(result.err)")
    #expect(try FileManager.default.destinationOfSymbolicLink(atPath: cask.path("null")) == "/dev/null")
    var status = stat()
    #expect(stat("/dev/null", &status) == 0 && (status.st_mode & S_IFMT) == S_IFCHR)
  }
}

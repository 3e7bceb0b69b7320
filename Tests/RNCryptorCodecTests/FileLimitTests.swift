import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

/// `encryptFile` and `decryptFile` accept every destination name the file system accepts and
/// every chunk size. Prevents a temporary name longer than NAME_MAX (the destination's name
/// plus 26 bytes) failing with ENAMETOOLONG, and a huge `chunkSize` trapping in `Data(count:)`.
@Suite("File helpers at their limits")
struct FileLimitTests {
  @Test("a destination name of 250 bytes (NAME_MAX is 255) works both ways")
  func longDestinationName() throws {
    try withTemporaryDirectory("cask-files") { directory throws in
      let plaintext = Data("long names are legal".utf8)
      try plaintext.write(to: URL(fileURLWithPath: directory.file("plain")))
      let keys = try Fixture.keys()
      let encrypted = directory.file(String(repeating: "e", count: 250))
      let decrypted = directory.file(String(repeating: "d", count: 250))

      try RNCryptor.encryptFile(at: directory.file("plain"), to: encrypted, keys: keys)
      try RNCryptor.decryptFile(at: encrypted, to: decrypted, keys: keys)
      #expect(try Data(contentsOf: URL(fileURLWithPath: decrypted)) == plaintext)
    }
  }

  @Test("chunkSize: .max reads the file in large pieces instead of trapping")
  func hugeChunkSize() async throws {
    await #expect(processExitsWith: .success) {
      let directory = try TemporaryDirectory("cask-files")
      defer { directory.remove() }
      let plaintext = Data("one chunk, please".utf8)
      try plaintext.write(to: URL(fileURLWithPath: directory.file("plain")))
      let keys = try Fixture.keys()
      try RNCryptor.encryptFile(at: directory.file("plain"), to: directory.file("enc"), keys: keys, chunkSize: .max)
      try RNCryptor.decryptFile(at: directory.file("enc"), to: directory.file("out"), keys: keys, chunkSize: .max)
      guard try Data(contentsOf: URL(fileURLWithPath: directory.file("out"))) == plaintext else { exit(2) }
    }
  }
}

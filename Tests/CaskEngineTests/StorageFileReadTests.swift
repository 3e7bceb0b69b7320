import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// The exact and the short reads of `StorageFile`, on the real file system.
@Suite("Reading a file: exactly, or up to a count")
struct StorageFileReadTests {
  @Test("read(count:at:) throws when the file ends early; read(upTo:at:) returns what is there")
  func exactReadRefusesShortFile() throws {
    try withTemporaryDirectory("read") { directory in
      let fileSystem = PosixFileSystem()
      let file = try fileSystem.open(directory.file("f"), mode: .createNew)
      defer { file.close() }
      try file.write(Data("hello".utf8), at: 0)
      #expect(try file.read(count: 5, at: 0) == Data("hello".utf8))
      #expect(throws: CaskError.io(operation: "read (the file ends early)", path: directory.file("f"), errno: EIO)) {
        try file.read(count: 6, at: 0)
      }
      #expect(try file.read(upTo: 6, at: 0) == Data("hello".utf8))
      #expect(try file.read(upTo: 4, at: 3) == Data("lo".utf8))
      #expect(try file.read(upTo: 4, at: 9).isEmpty)
    }
  }
}

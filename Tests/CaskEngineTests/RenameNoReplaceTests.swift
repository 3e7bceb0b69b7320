import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// `PosixFileSystem.renameNoReplace`, the rekeyed copy's last step: one
/// `renameat2(RENAME_NOREPLACE)`, so that nothing made at the destination meanwhile (an empty
/// directory, which a plain `rename` replaces without a word) is ever replaced. The copy used
/// to check the destination and then rename: a directory made between the two was lost.
@Suite("Renaming without replacing")
struct RenameNoReplaceTests {
  private static func makeCopy(in directory: TemporaryDirectory) throws -> String {
    let source = directory.file(".copy.rekey-1")
    try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: false)
    try Data("a file of the copy".utf8).write(to: URL(fileURLWithPath: source + "/CASK"))
    return source
  }

  @Test("an empty directory, a file or a symbolic link at the destination is kept, with EEXIST; the source stays")
  func somethingThereIsKept() throws {
    try withTemporaryDirectory("rename-noreplace") { directory throws in
      let source = try Self.makeCopy(in: directory)
      let fileSystem = PosixFileSystem()
      let emptyDirectory = directory.file("empty")
      try FileManager.default.createDirectory(atPath: emptyDirectory, withIntermediateDirectories: false)
      let file = directory.file("file")
      try Data("theirs".utf8).write(to: URL(fileURLWithPath: file))
      let danglingLink = directory.file("link")
      #expect(symlink(directory.file("nowhere"), danglingLink) == 0)
      for destination in [emptyDirectory, file, danglingLink] {
        do {
          try fileSystem.renameNoReplace(source, to: destination)
          Issue.record("\(destination) was replaced")
        } catch CaskError.io(_, let path, let code) {
          #expect(code == EEXIST, "\(destination)")
          #expect(path == destination)
        }
        #expect(fileSystem.fileKind(source + "/CASK") == .file, "the source stays whole")
      }
      #expect(try FileManager.default.contentsOfDirectory(atPath: emptyDirectory).isEmpty)
      #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data("theirs".utf8))
      #expect(try FileManager.default.destinationOfSymbolicLink(atPath: danglingLink) == directory.file("nowhere"))
    }
  }

  @Test("a missing destination gets the source")
  func missingDestination() throws {
    try withTemporaryDirectory("rename-noreplace-missing") { directory throws in
      let source = try Self.makeCopy(in: directory)
      try PosixFileSystem().renameNoReplace(source, to: directory.file("copy.cask"))
      #expect(PosixFileSystem().fileKind(source) == .missing)
      #expect(
        try Data(contentsOf: URL(fileURLWithPath: directory.file("copy.cask/CASK"))) == Data("a file of the copy".utf8))
    }
  }
}

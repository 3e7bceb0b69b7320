import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// `backup(to:shouldContinue:)` and `rekeyedCopy(to:password:shouldContinue:)` stopped at
/// each question they ask: nothing is left behind (no file, no directory the call made), the
/// store goes on, and a copy let through to the end is whole. What `cask backup`/`rekey` do
/// on Ctrl-C, and the `async` forms on a task's cancellation.
@Suite("Backup and rekeyed copy stopped part-way")
struct CopyCancellationTests {
  /// Opens a finished copy, never making one.
  private static func openCopy(
    _ fileSystem: FaultyFileSystem, _ path: String, password: String = FaultWorkload.password
  ) throws -> CaskStore {
    var options = FaultWorkload.options(fileSystem)
    options.createIfMissing = false
    return try CaskStore(path: path, password: password, options: options)
  }

  @Test("a backup stopped at any of its questions removes every file and directory it made; an empty DIR stays empty")
  func backupStoppedAnywhere() throws {
    var random = SeededRandom.make(test: "CopyCancellationTests.backupStoppedAnywhere")
    for iteration in 0..<testIterations(2) {
      let (fileSystem, store, model) = try FaultWorkload.prepared(&random, readOnly: iteration % 2 == 1)
      defer { try? store.close() }
      var questions = 0
      try store.backup(to: "/data/counted/copy.cask") {
        questions += 1
        return true
      }
      #expect(questions > store.stats().segments, "one question per file at least, and one for the header")
      try fileSystem.createDirectory("/data/empty")
      for stopAt in 0..<questions {
        var asked = 0
        let shouldContinue = {
          asked += 1
          return asked <= stopAt
        }
        #expect(throws: CancellationError.self) {
          try store.backup(to: "/data/stopped/deeper/copy.cask", shouldContinue: shouldContinue)
        }
        #expect(asked == stopAt + 1, "no question after the one answered no")
        #expect(fileSystem.fileKind("/data/stopped") == .missing, "iteration \(iteration), stopped at \(stopAt)")
        asked = 0
        #expect(throws: CancellationError.self) { try store.backup(to: "/data/empty", shouldContinue: shouldContinue) }
        #expect(try fileSystem.contentsOfDirectory("/data/empty") == [], "stopped at \(stopAt)")
      }
      try store.backup(to: "/data/empty") { true }
      let copy = try Self.openCopy(fileSystem, "/data/empty")
      FaultWorkload.expect(try FaultWorkload.contents(of: copy), isOneOf: [model], "the copy after the stopped ones")
      try copy.close()
    }
  }

  @Test(
    "a rekeyed copy stopped at any of its questions leaves neither DIR, nor its hidden directory, nor a parent it made")
  func rekeyStoppedAnywhere() throws {
    var random = SeededRandom.make(test: "CopyCancellationTests.rekeyStoppedAnywhere")
    for iteration in 0..<testIterations(2) {
      let (fileSystem, store, model) = try FaultWorkload.prepared(&random, readOnly: iteration % 2 == 1)
      defer { try? store.close() }
      var questions = 0
      try store.rekeyedCopy(to: "/data/counted.cask", password: "new") {
        questions += 1
        return true
      }
      #expect(questions == model.count + 1, "one question per key, and one before the rename")
      for stopAt in 0..<questions {
        var asked = 0
        #expect(throws: CancellationError.self) {
          try store.rekeyedCopy(to: "/data/new/deeper/copy.cask", password: "new") {
            asked += 1
            return asked <= stopAt
          }
        }
        #expect(asked == stopAt + 1, "no question after the one answered no")
        #expect(fileSystem.fileKind("/data/new") == .missing, "iteration \(iteration), stopped at \(stopAt)")
        #expect(try fileSystem.contentsOfDirectory("/data").sorted() == ["counted.cask", "store.cask"])
      }
      if !store.options.readOnly {
        // The writer was let go: the store takes writes again.
        try store.put(Data("after".utf8), forKey: "written after the stopped copies")
        #expect(try store.get("written after the stopped copies") == Data("after".utf8))
      }
      let copy = try Self.openCopy(fileSystem, "/data/counted.cask", password: "new")
      FaultWorkload.expect(try FaultWorkload.contents(of: copy), isOneOf: [model], "the counted copy is whole")
      try copy.close()
    }
  }
}

import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// Review of `rekeyedCopy(to:password:)` on the real file system: what someone who can write
/// the destination's parent plants beside the copy (at the hidden directory's name, or at the
/// destination while the copy is built) is neither used, nor emptied, nor silently replaced.
@Suite("Rekeyed copy review")
struct RekeyReviewTests {
  private static func filledStore(_ directory: TemporaryDirectory, fileSystem: any FileSystem) throws -> CaskStore {
    let options = CaskStore.Options(durability: .never, autoCompaction: nil, fileSystem: fileSystem)
    let store = try CaskStore(path: directory.file("s.cask"), password: "old password", options: options)
    for index in 0..<20 { try store.put(Data("value \(index)".utf8), forKey: "key-\(index)") }
    return store
  }

  /// A hook that acts once, on the first path it is given that `matches`.
  private static func once(
    _ matches: @escaping @Sendable (String) -> Bool, _ action: @escaping @Sendable (String) -> Void
  ) -> @Sendable (String) -> Void {
    let done = Locked(false)
    return { path in
      guard matches(path) else { return }
      let first = done.withLock { done in
        defer { done = true }
        return !done
      }
      guard first else { return }
      action(path)
    }
  }

  /// Whether `path` is the hidden directory a rekeyed copy is built in.
  private static func isHidden(_ path: String) -> Bool {
    path.split(separator: "/").last?.contains(".rekey-") == true
  }

  @Test("a symbolic link planted at the hidden directory's name is not followed: the copy is not built in its target")
  func plantedLinkAtHiddenName() throws {
    let directory = try TemporaryDirectory("rekey-review-link")
    defer { directory.remove() }
    let elsewhere = directory.file("elsewhere")
    try FileManager.default.createDirectory(
      atPath: elsewhere, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
    let plantedLinks = Locked<[String]>([])
    let fileSystem = HookedFileSystem(
      beforeCreateDirectory: Self.once(Self.isHidden) { path in
        if symlink(elsewhere, path) == 0 { plantedLinks.withLock { $0.append(path) } }
      })
    let store = try Self.filledStore(directory, fileSystem: fileSystem)
    defer { try? store.close() }
    let destination = directory.file("new.cask")
    fileSystem.armed.store(true, ordering: .releasing)
    let outcome = Result { try store.rekeyedCopy(to: destination, password: "new password") }
    fileSystem.armed.store(false, ordering: .releasing)
    try #require(plantedLinks.withLock { $0 }.count == 1)
    let written = try FileManager.default.contentsOfDirectory(atPath: elsewhere)
    #expect(written.isEmpty, "the copy went into the planted link's target: \(written), \(outcome)")
    if let type = try? FileManager.default.attributesOfItem(atPath: destination)[.type] as? FileAttributeType {
      #expect(type == .typeDirectory, "the destination is \(type), not a directory of its own")
    }
  }

  @Test("a directory already at the hidden directory's name is neither used for the copy nor emptied")
  func plantedDirectoryAtHiddenName() throws {
    let directory = try TemporaryDirectory("rekey-review-dir")
    defer { directory.remove() }
    let plantedFiles = Locked<[String]>([])
    let fileSystem = HookedFileSystem(
      beforeCreateDirectory: Self.once(Self.isHidden) { path in
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        _ = FileManager.default.createFile(atPath: "\(path)/notes.txt", contents: Data("someone's".utf8))
        plantedFiles.withLock { $0.append("\(path)/notes.txt") }
      })
    let store = try Self.filledStore(directory, fileSystem: fileSystem)
    defer { try? store.close() }
    let destination = directory.file("new.cask")
    fileSystem.armed.store(true, ordering: .releasing)
    let outcome = Result { try store.rekeyedCopy(to: destination, password: "new password") }
    fileSystem.armed.store(false, ordering: .releasing)
    let planted = try #require(plantedFiles.withLock { $0 }.first)
    let copied = FileManager.default.fileExists(atPath: "\(destination)/notes.txt")
    #expect(!copied, "the copy was built in the planted directory (it holds its file): \(outcome)")
    #expect(copied || FileManager.default.fileExists(atPath: planted), "the planted file was removed: \(outcome)")
  }

  @Test("an empty directory made at the destination while the copy is built is not replaced by the rename")
  func destinationAppearsDuringCopy() throws {
    let directory = try TemporaryDirectory("rekey-review-late")
    defer { directory.remove() }
    let destination = directory.file("new.cask")
    // When the copy's header is looked for: after the destination was checked, before the rename.
    let makeDestination = Self.once(
      { $0.hasSuffix("/\(CaskFormat.headerFileName)") && $0.contains(".rekey-") },
      { _ in _ = mkdir(destination, 0o755) })
    let fileSystem = HookedFileSystem(afterFileKind: { path, _ in makeDestination(path) })
    let store = try Self.filledStore(directory, fileSystem: fileSystem)
    defer { try? store.close() }
    fileSystem.armed.store(true, ordering: .releasing)
    let outcome = Result { try store.rekeyedCopy(to: destination, password: "new password") }
    fileSystem.armed.store(false, ordering: .releasing)
    #expect(throws: CaskError.self, "the directory made meanwhile was replaced") { try outcome.get() }
    #expect(try FileManager.default.contentsOfDirectory(atPath: destination).isEmpty)
    let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".rekey-") }
    #expect(left.isEmpty, "hidden directory left: \(left)")
  }
}

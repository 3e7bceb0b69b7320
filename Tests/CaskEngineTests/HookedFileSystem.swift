import CaskTestSupport
import Foundation
import Synchronization

@testable import CaskEngine

/// The real file system with hooks that let a test act at one exact moment of the engine's
/// work: just before a rename, or just after `fileKind` answered. What a hook does there (copy
/// the store, which is what a SIGKILL at that moment would leave, since a kill loses nothing
/// that reached the page cache; or remove a file, as a compaction on another thread may) lands
/// between two steps of the engine every time, not by luck of scheduling.
///
/// Every other call reaches the real file system unchanged (`ForwardingFileSystem`).
final class HookedFileSystem: ForwardingFileSystem, @unchecked Sendable {
  /// Whether the hooks run.
  let armed = Atomic(false)
  private let beforeRename: @Sendable (_ source: String) -> Void
  private let afterFileKind: @Sendable (_ path: String, _ kind: FileKind) -> Void
  private let beforeCreateDirectory: @Sendable (_ path: String) -> Void

  init(
    beforeRename: @escaping @Sendable (_ source: String) -> Void = { _ in },
    afterFileKind: @escaping @Sendable (_ path: String, _ kind: FileKind) -> Void = { _, _ in },
    beforeCreateDirectory: @escaping @Sendable (_ path: String) -> Void = { _ in }
  ) {
    self.beforeRename = beforeRename
    self.afterFileKind = afterFileKind
    self.beforeCreateDirectory = beforeCreateDirectory
    super.init()
  }

  override func rename(_ source: String, to destination: String) throws {
    if armed.load(ordering: .acquiring) { beforeRename(source) }
    try super.rename(source, to: destination)
  }

  override func renameNoReplace(_ source: String, to destination: String) throws {
    if armed.load(ordering: .acquiring) { beforeRename(source) }
    try super.renameNoReplace(source, to: destination)
  }

  override func fileKind(_ path: String) -> FileKind {
    let kind = super.fileKind(path)
    if armed.load(ordering: .acquiring) { afterFileKind(path, kind) }
    return kind
  }

  override func createDirectory(_ path: String) throws {
    if armed.load(ordering: .acquiring) { beforeCreateDirectory(path) }
    try super.createDirectory(path)
  }

  override func createDirectoryExclusively(_ path: String) throws {
    if armed.load(ordering: .acquiring) { beforeCreateDirectory(path) }
    try super.createDirectoryExclusively(path)
  }

  /// Copies every file of a store directory but its lock into a new directory.
  ///
  /// The store is open while a hook copies it: its hint queue may rename a `.tmp` file between
  /// the listing and the copy. That file is left out, as a crash before the rename leaves it;
  /// any other file that cannot be copied fails the copy. Prevents: a copy that stopped at a
  /// vanished `.tmp` inside a hook whose caller swallows the error (compaction's input removal
  /// does), leaving an image without the files listed after it.
  static func copyStore(_ source: String, to destination: String) throws {
    let manager = FileManager.default
    try manager.createDirectory(atPath: destination, withIntermediateDirectories: true)
    for name in try manager.contentsOfDirectory(atPath: source) where name != CaskFormat.lockFileName {
      do {
        try manager.copyItem(atPath: "\(source)/\(name)", toPath: "\(destination)/\(name)")
      } catch  where name.hasSuffix(CaskFormat.temporarySuffix) && !manager.fileExists(atPath: "\(source)/\(name)") {
        try? manager.removeItem(atPath: "\(destination)/\(name)")
      }
    }
  }
}

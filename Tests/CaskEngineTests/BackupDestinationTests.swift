import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// Where `backup(to:)` writes: a failed or concurrent backup does not remove or replace files
/// it did not write, a failure removes the directories it made, an empty destination is not
/// the file system's root, and a destination inside the store is refused.
@Suite("Online backup: the destination")
struct BackupDestinationTests {
  private static let options = CaskStore.Options(durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)

  /// Puts `count` keys with values of about 300 bytes (several segments at 4 KiB); returns them.
  private static func fill(_ store: CaskStore, prefix: String, count: Int) throws -> [String: Data] {
    var values: [String: Data] = [:]
    for index in 0..<count {
      let value = Data("\(prefix) \(index) \(String(repeating: "v", count: 300))".utf8)
      try store.put(value, forKey: "\(prefix)-\(index)")
      values["\(prefix)-\(index)"] = value
    }
    return values
  }

  private static func contents(_ path: String, password: String) throws -> [String: Data] {
    var options = CaskStore.Options(durability: .never)
    options.createIfMissing = false
    let store = try CaskStore(path: path, password: password, options: options)
    defer { try? store.close() }
    var contents: [String: Data] = [:]
    for key in try store.keys() { contents[key] = try store.get(key) }
    return contents
  }

  @Test("a backup that finds its destination taken by another backup of the same store removes none of its files")
  func concurrentBackupOfTheSameStore() throws {
    try withTemporaryDirectory("backup-same-store") { directory throws in
      let destination = directory.file("copy.cask")
      let current = Locked<CaskStore?>(nil)
      let second = Locked<String?>(nil)
      let fired = Atomic(false)
      // The second backup runs to its end exactly when the first has looked at the destination
      // (found nothing there) and not yet made it: as two threads or processes may.
      let fileSystem = HookedFileSystem(afterFileKind: { path, kind in
        guard path == destination, kind == .missing, !fired.exchange(true, ordering: .acquiringAndReleasing) else {
          return
        }
        do {
          try current.withLock { $0 }?.backup(to: destination)
          second.withLock { $0 = "finished" }
        } catch {
          second.withLock { $0 = "\(error)" }
        }
      })
      var options = Self.options
      options.fileSystem = fileSystem
      let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: options)
      defer { try? store.close() }
      let values = try Self.fill(store, prefix: "key", count: 40)
      #expect(store.stats().segments > 2)
      current.withLock { $0 = store }
      fileSystem.armed.store(true, ordering: .releasing)
      var first = "finished"
      do { try store.backup(to: destination) } catch { first = "\(error)" }
      fileSystem.armed.store(false, ordering: .releasing)
      let outcomes = [first, second.withLock { $0 } ?? "not run"]
      #expect(outcomes.filter { $0 == "finished" }.count == 1, "\(outcomes)")
      // The backup that reported success has a whole copy: the other one removed none of its files.
      #expect(try Self.contents(destination, password: "pw") == values, "\(outcomes)")
    }
  }

  @Test("two stores backed up into one destination at once: one backup fails, the other's copy stays whole")
  func concurrentBackupsOfTwoStores() throws {
    try withTemporaryDirectory("backup-two-stores") { directory throws in
      let destination = directory.file("copy.cask")
      let other = Locked<CaskStore?>(nil)
      let second = Locked<String?>(nil)
      let fired = Atomic(false)
      let fileSystem = HookedFileSystem(afterFileKind: { path, kind in
        guard path == destination, kind == .missing, !fired.exchange(true, ordering: .acquiringAndReleasing) else {
          return
        }
        do {
          try other.withLock { $0 }?.backup(to: destination)
          second.withLock { $0 = "finished" }
        } catch {
          second.withLock { $0 = "\(error)" }
        }
      })
      var options = Self.options
      options.fileSystem = fileSystem
      let first = try CaskStore(path: directory.file("a.cask"), password: "pw-a", options: options)
      defer { try? first.close() }
      let firstValues = try Self.fill(first, prefix: "a", count: 8)
      // The second store's files have other numbers than the first's: its first ones were compacted away.
      let secondStore = try CaskStore(path: directory.file("b.cask"), password: "pw-b", options: options)
      defer { try? secondStore.close() }
      _ = try Self.fill(secondStore, prefix: "b", count: 40)
      let secondValues = try Self.fill(secondStore, prefix: "b", count: 40)
      try secondStore.compact()
      let names = { (path: String) in
        Set(try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") })
      }
      try #require(try names(directory.file("a.cask")).isDisjoint(with: names(directory.file("b.cask"))))
      other.withLock { $0 = secondStore }
      fileSystem.armed.store(true, ordering: .releasing)
      var outcome = "finished"
      do { try first.backup(to: destination) } catch { outcome = "\(error)" }
      fileSystem.armed.store(false, ordering: .releasing)
      let outcomes = [outcome, second.withLock { $0 } ?? "not run"]
      #expect(outcomes.filter { $0 == "finished" }.count == 1, "both backups wrote into one directory: \(outcomes)")
      if outcomes[0] == "finished" {
        #expect(try Self.contents(destination, password: "pw-a") == firstValues)
      } else {
        #expect(try Self.contents(destination, password: "pw-b") == secondValues)
      }
      let files = try FileManager.default.contentsOfDirectory(atPath: destination).filter { $0.hasSuffix(".seg") }
      let expected = (outcomes[0] == "finished" ? try names(directory.file("a.cask")) : [])
        .union(outcomes[1] == "finished" ? try names(directory.file("b.cask")) : [])
      #expect(Set(files) == expected, "files of both stores: \(files.sorted())")
    }
  }

  @Test("a backup that fails while it makes the destination's directories removes the ones it made")
  func failureWhileMakingDirectories() throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let store = try FaultWorkload.open(FaultWorkload.options(fileSystem, durability: .never))
    defer { try? store.close() }
    try store.put(Data("v".utf8), forKey: "k")
    // `/data/copies` and `/data/copies/backup.cask` are made; then syncing `/data` fails.
    fileSystem.inject(.init([.syncDirectory], errno: EIO, paths: { $0 == FaultWorkload.directory }))
    #expect(throws: CaskError.io(operation: "fsync", path: FaultWorkload.directory, errno: EIO)) {
      try store.backup(to: "/data/copies/backup.cask")
    }
    fileSystem.clearFaults()
    #expect(fileSystem.fileKind("/data/copies/backup.cask") == .missing)
    #expect(fileSystem.fileKind("/data/copies") == .missing, "a directory the failed backup made is left")
  }

  /// The real file system, but a path outside `root` cannot be created, written or removed
  /// (EACCES); each attempt is noted.
  private final class FencedFileSystem: ForwardingFileSystem, @unchecked Sendable {
    private let root: String
    let escapes = Locked<[String]>([])

    init(root: String) {
      self.root = root
      super.init()
    }

    private func check(_ path: String) throws {
      guard !path.hasPrefix(root + "/") else { return }
      escapes.withLock { $0.append(path) }
      throw CaskError.io(operation: "fenced", path: path, errno: EACCES)
    }

    override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
      if mode != .readOnly { try check(path) }
      return try super.open(path, mode: mode)
    }

    override func createDirectory(_ path: String) throws {
      if !path.isEmpty { try check(path) }
      try super.createDirectory(path)
    }

    override func createDirectoryExclusively(_ path: String) throws {
      if !path.isEmpty { try check(path) }
      try super.createDirectoryExclusively(path)
    }

    override func removeFile(_ path: String) throws {
      try check(path)
      try super.removeFile(path)
    }

    override func removeDirectory(_ path: String) throws {
      if !path.isEmpty { try check(path) }
      try super.removeDirectory(path)
    }

    override func rename(_ source: String, to destination: String) throws {
      try check(source)
      try check(destination)
      try super.rename(source, to: destination)
    }

    override func renameNoReplace(_ source: String, to destination: String) throws {
      try check(source)
      try check(destination)
      try super.renameNoReplace(source, to: destination)
    }
  }

  @Test("an empty destination is refused, not taken for the root directory")
  func emptyDestination() throws {
    try withTemporaryDirectory("backup-empty-destination") { directory throws in
      let fileSystem = FencedFileSystem(root: directory.path)
      var options = Self.options
      options.fileSystem = fileSystem
      let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: options)
      defer { try? store.close() }
      try store.put(Data("v".utf8), forKey: "k")
      #expect(throws: CaskError.self) { try store.backup(to: "") }
      #expect(fileSystem.escapes.withLock { $0 }.isEmpty, "wrote outside: \(fileSystem.escapes.withLock { $0 })")
    }
  }

  @Test("a destination inside the store's own directory is refused: the store's open reads and removes names there")
  func destinationInsideTheStore() throws {
    try withStore(options: Self.options, label: "backup-inside-store") { store, path throws in
      let values = try Self.fill(store, prefix: "key", count: 5)
      for inside in [
        "\(path)/old.tmp", "\(path)/../\(URL(fileURLWithPath: path).lastPathComponent)/00000009.seg",
        "\(path)/copies/today",
      ] {
        #expect(throws: CaskError.self, "\(inside)") { try store.backup(to: inside) }
      }
      try store.close()
      #expect(try FileManager.default.contentsOfDirectory(atPath: path).allSatisfy { !$0.hasSuffix(".tmp") })
      #expect(try Self.contents(path, password: "pw") == values, "the store no longer opens")
    }
  }
}

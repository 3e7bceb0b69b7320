import CaskEngine
import CaskTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The fault-injecting file system must itself be right, or the store tests prove nothing.
@Suite("FaultyFileSystem")
struct FaultyFileSystemTests {
  private func write(_ text: String, to file: any StorageFile, at offset: UInt64 = 0) throws {
    try file.write(Data(text.utf8), at: offset)
  }

  private func text(_ fileSystem: FaultyFileSystem, _ path: String) -> String? {
    fileSystem.contents(of: path).map { String(decoding: $0, as: UTF8.self) }
  }

  @Test("positioned reads and writes, sizes, truncation, and reads through a removed file")
  func positionedIO() throws {
    let fileSystem = FaultyFileSystem(directories: ["/d"])
    let file = try fileSystem.open("/d/f", mode: .createNew)
    try write("hello world", to: file)
    try write("W", to: file, at: 6)
    try write("!", to: file, at: 13)
    #expect(try file.size() == 14)
    #expect(try file.read(count: 14, at: 0) == Data("hello World\0\0!".utf8))
    #expect(try file.read(upTo: 100, at: 12) == Data("\0!".utf8))
    #expect(try file.read(upTo: 4, at: 20).isEmpty)
    try file.truncate(to: 5)
    #expect(try file.read(upTo: 100, at: 0) == Data("hello".utf8))
    try fileSystem.removeFile("/d/f")
    #expect(fileSystem.fileKind("/d/f") == .missing)
    #expect(try file.read(count: 5, at: 0) == Data("hello".utf8))
    file.close()
    #expect(throws: CaskError.io(operation: "pread", path: "/d/f", errno: EBADF)) { try file.read(count: 1, at: 0) }
  }

  @Test("a snapshot with added files holds them durable, counts no mutation, and leaves the original alone")
  func snapshotAddingFiles() throws {
    let template = FaultyFileSystem(directories: ["/d"])
    let kept = try template.open("/d/kept", mode: .createNew)
    try write("kept", to: kept)
    try kept.sync()
    kept.close()
    try template.syncDirectory("/d")

    let copy = try template.snapshot(adding: [("/d/new", Array("new".utf8)), ("/d/./other", [1, 2])])
    #expect(copy.mutationCount == 0)
    #expect(text(copy, "/d/new") == "new")
    #expect(copy.contents(of: "/d/other") == [1, 2])
    #expect(try copy.contentsOfDirectory("/d").sorted() == ["kept", "new", "other"])
    #expect(template.fileKind("/d/new") == .missing)
    // What a power loss leaves: the added files were written, synced and linked for good.
    let survivor = copy.crashLosingUnsyncedChanges()
    #expect(text(survivor, "/d/new") == "new")
    #expect(text(survivor, "/d/kept") == "kept")

    // A template with unsynced changes gives them durable too, as `snapshot()` does.
    let unsynced = try template.open("/d/unsynced", mode: .createNew)
    try write("later", to: unsynced)
    unsynced.close()
    let second = try template.snapshot(adding: [("/d/new", [])]).crashLosingUnsyncedChanges()
    #expect(text(second, "/d/unsynced") == "later")
    #expect(text(second, "/d/kept") == "kept")

    #expect(throws: CaskError.io(operation: "open", path: "/d/kept", errno: EEXIST)) {
      try template.snapshot(adding: [("/d/kept", [])])
    }
    #expect(throws: CaskError.io(operation: "open", path: "/missing/f", errno: ENOENT)) {
      try template.snapshot(adding: [("/missing/f", [])])
    }
  }

  @Test("open modes, directories, listing and rename follow POSIX")
  func namespace() throws {
    let fileSystem = FaultyFileSystem()
    try fileSystem.createDirectory("/a/b")
    #expect(fileSystem.fileKind("/a") == .directory)
    #expect(throws: CaskError.io(operation: "open", path: "/a/b/x", errno: ENOENT)) {
      try fileSystem.open("/a/b/x", mode: .readWrite)
    }
    #expect(throws: CaskError.io(operation: "open", path: "/a/q/x", errno: ENOENT)) {
      try fileSystem.open("/a/q/x", mode: .createNew)
    }
    let first = try fileSystem.open("/a/b/x", mode: .createNew)
    try write("old", to: first)
    #expect(throws: CaskError.io(operation: "open", path: "/a/b/x", errno: EEXIST)) {
      try fileSystem.open("/a/b/x", mode: .createNew)
    }
    let second = try fileSystem.open("/a/b/y", mode: .createNew)
    try write("new", to: second)
    try fileSystem.rename("/a/b/y", to: "/a/b/x")
    #expect(try fileSystem.contentsOfDirectory("/a/b") == ["x"])
    #expect(text(fileSystem, "/a/b/x") == "new")
    #expect(try first.read(count: 3, at: 0) == Data("old".utf8))
    let readOnly = try fileSystem.open("/a/b/x", mode: .readOnly)
    #expect(throws: CaskError.io(operation: "pwrite", path: "/a/b/x", errno: EBADF)) {
      try readOnly.write(Data("z".utf8), at: 0)
    }
    try fileSystem.removeFile("/a/b/missing")
    #expect(throws: CaskError.io(operation: "opendir", path: "/a/b/x", errno: ENOTDIR)) {
      try fileSystem.contentsOfDirectory("/a/b/x")
    }
  }

  @Test("locks: one exclusive holder or many shared ones, released by unlock")
  func locks() throws {
    let fileSystem = FaultyFileSystem(directories: ["/d"])
    let exclusive = try fileSystem.lock("/d/LOCK", exclusive: true)
    #expect(throws: CaskError.locked(path: "/d/LOCK")) { try fileSystem.lock("/d/LOCK", exclusive: true) }
    #expect(throws: CaskError.locked(path: "/d/LOCK")) { try fileSystem.lock("/d/LOCK", exclusive: false) }
    exclusive.unlock()
    let shared = try fileSystem.lock("/d/LOCK", exclusive: false)
    let another = try fileSystem.lock("/d/LOCK", exclusive: false)
    #expect(throws: CaskError.locked(path: "/d/LOCK")) { try fileSystem.lock("/d/LOCK", exclusive: true) }
    shared.unlock()
    another.unlock()
    try fileSystem.lock("/d/LOCK", exclusive: true).unlock()
  }

  @Test("a crash keeps synced bytes and synced directory entries, and a prefix of the rest")
  func crashKeepsDurableState() throws {
    var random = SeededRandom.make(test: "FaultyFileSystem crash")
    for _ in 0..<testIterations(50) {
      let fileSystem = FaultyFileSystem(directories: ["/d"])
      let synced = try fileSystem.open("/d/synced", mode: .createNew)
      try write("durable", to: synced)
      try synced.sync()
      try fileSystem.syncDirectory("/d")
      try write("+more", to: synced, at: 7)
      try write("+most", to: synced, at: 12)
      let unnamed = try fileSystem.open("/d/unnamed", mode: .createNew)
      try write("x", to: unnamed)
      try unnamed.sync()
      let renamed = try fileSystem.open("/d/temp", mode: .createNew)
      try write("r", to: renamed)
      try renamed.sync()
      try fileSystem.syncDirectory("/d")
      try fileSystem.rename("/d/temp", to: "/d/final")

      let survivor = fileSystem.crash(using: &random)
      #expect(fileSystem.isPoweredOff)
      #expect(throws: CaskError.io(operation: "pwrite", path: "/d/synced", errno: EIO)) {
        try synced.write(Data("late".utf8), at: 0)
      }
      let kept = try #require(text(survivor, "/d/synced"))
      #expect("durable+more+most".hasPrefix(kept) && kept.hasPrefix("durable"))
      let names = try survivor.contentsOfDirectory("/d")
      #expect(names == ["final", "synced", "unnamed"] || names == ["synced", "temp", "unnamed"])
      #expect(text(survivor, "/d/final") ?? text(survivor, "/d/temp") == "r")
      #expect(text(survivor, "/d/unnamed") == "x")
    }
  }

  @Test("a crash can drop, keep or tear unsynced writes, and undo unsynced directory changes")
  func crashOutcomesVary() throws {
    var random = SeededRandom.make(test: "FaultyFileSystem crash outcomes")
    var lengths = Set<Int>()
    var vanished = 0
    for _ in 0..<200 {
      let fileSystem = FaultyFileSystem(directories: ["/d"])
      let file = try fileSystem.open("/d/f", mode: .createNew)
      try write("0123456789", to: file)
      let survivor = fileSystem.crash(using: &random)
      if let bytes = survivor.contents(of: "/d/f") { lengths.insert(bytes.count) } else { vanished += 1 }
    }
    #expect(vanished > 0)
    #expect(lengths.contains(0) && lengths.contains(10))
    #expect(lengths.contains { $0 > 0 && $0 < 10 })
  }

  @Test("a scheduled crash performs the chosen operation, then fails it and every later one")
  func scheduledCrash() throws {
    let fileSystem = FaultyFileSystem(directories: ["/d"])
    let file = try fileSystem.open("/d/f", mode: .createNew)
    fileSystem.scheduleCrash(afterMutations: 2)
    try write("a", to: file)
    #expect(!fileSystem.isPoweredOff)
    #expect(throws: CaskError.io(operation: "fdatasync", path: "/d/f", errno: EIO)) { try file.sync() }
    #expect(fileSystem.isPoweredOff)
    #expect(throws: CaskError.io(operation: "pread", path: "/d/f", errno: EIO)) { try file.read(count: 1, at: 0) }
    var random = SeededRandom(seed: 1)
    let survivor = fileSystem.crash(using: &random)
    // The sync went through before the power failed, so the byte is durable.
    #expect(survivor.contents(of: "/d/f") == Array("a".utf8) || survivor.fileKind("/d/f") == .missing)
  }

  @Test("a full disk writes what fits, fails with ENOSPC, and takes writes again when space is freed")
  func fullDisk() throws {
    let fileSystem = FaultyFileSystem(directories: ["/d"])
    let file = try fileSystem.open("/d/f", mode: .createNew)
    try write("12345", to: file)
    fileSystem.setFreeBytes(3)
    #expect(throws: CaskError.io(operation: "pwrite", path: "/d/f", errno: ENOSPC)) {
      try write("abcdef", to: file, at: 5)
    }
    #expect(fileSystem.contents(of: "/d/f") == Array("12345abc".utf8))
    #expect(fileSystem.freeBytes == 0)
    try write("XY", to: file, at: 0)
    try file.truncate(to: 5)
    #expect(fileSystem.freeBytes == 3)
    fileSystem.setFreeBytes(nil)
    try write("abcdef", to: file, at: 5)
    #expect(fileSystem.contents(of: "/d/f") == Array("XY345abcdef".utf8))
  }

  @Test("injected faults fail matching operations after a count, for a number of times")
  func injectedFaults() throws {
    let fileSystem = FaultyFileSystem(directories: ["/d"])
    let file = try fileSystem.open("/d/f.seg", mode: .createNew)
    let other = try fileSystem.open("/d/g", mode: .createNew)
    fileSystem.inject(.init([.write], after: 1, times: 2, paths: { $0.hasSuffix(".seg") }))
    try write("a", to: file)
    try write("b", to: other)
    #expect(throws: CaskError.io(operation: "pwrite", path: "/d/f.seg", errno: EIO)) { try write("b", to: file) }
    #expect(throws: CaskError.io(operation: "pwrite", path: "/d/f.seg", errno: EIO)) { try write("b", to: file) }
    try write("c", to: file, at: 1)
    #expect(fileSystem.contents(of: "/d/f.seg") == Array("ac".utf8))
    fileSystem.inject(.init([.sync]))
    #expect(throws: CaskError.io(operation: "fdatasync", path: "/d/g", errno: EIO)) { try other.sync() }
    fileSystem.clearFaults()
    try other.sync()
    try fileSystem.syncDirectory("/d")
    var random = SeededRandom(seed: 7)
    // The failed sync lost the write for good: the later sync did not bring it back.
    #expect(fileSystem.crash(using: &random).contents(of: "/d/g") == [])
  }
}

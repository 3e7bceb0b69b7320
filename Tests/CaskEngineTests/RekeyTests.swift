import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// `rekeyedCopy(to:password:)`: a copy with a new data key that holds exactly what the store
/// held, and that appears at its path whole or not at all.
@Suite("Rekeyed copy")
struct RekeyTests {
  static let destination = "/data/new/rekeyed.cask"
  static let newPassword = "a new password"

  private static func bytes(_ secret: SecureBytes) -> [UInt8] {
    secret.withUnsafeBytes { Array($0) }
  }

  private static func openCopy(_ fileSystem: FaultyFileSystem, password: String = newPassword) throws -> CaskStore {
    var options = FaultWorkload.options(fileSystem)
    options.createIfMissing = false
    return try CaskStore(path: destination, password: password, options: options)
  }

  @Test(
    "the copy holds every key and value under a new data key and the new password; the old password does not open it")
  func roundTrip() throws {
    var random = SeededRandom.make(test: "rekeyed copy round trip")
    for iteration in 0..<testIterations(3) {
      let (fileSystem, store, model) = try FaultWorkload.prepared(&random)
      defer { try? store.close() }
      let report = try store.rekeyedCopy(to: Self.destination, password: Self.newPassword)
      #expect(report.keys == model.count)
      #expect(report.valueBytes == model.values.reduce(0) { $0 + UInt64($1.count) })
      let copy = try Self.openCopy(fileSystem)
      FaultWorkload.expect(try FaultWorkload.contents(of: copy), isOneOf: [model], "iteration \(iteration)")
      #expect(
        Self.bytes(copy.cipher.keys.encryptionKey) != Self.bytes(store.cipher.keys.encryptionKey), "a new data key")
      #expect(Self.bytes(copy.cipher.keys.hmacKey) != Self.bytes(store.cipher.keys.hmacKey))
      #expect(try copy.verify().damage.isEmpty)
      try copy.close()
      #expect(throws: CaskError.self) { try Self.openCopy(fileSystem, password: FaultWorkload.password) }
      #expect(try fileSystem.contentsOfDirectory("/data/new") == ["rekeyed.cask"], "no hidden directory left")
      FaultWorkload.expect(try FaultWorkload.contents(of: store), isOneOf: [model], "the store is unchanged")
    }
  }

  @Test("a copy with raw keys opens with those keys and runs no PBKDF2")
  func withKeys() throws {
    var random = SeededRandom.make(test: "rekeyed copy with keys")
    let (fileSystem, store, model) = try FaultWorkload.prepared(&random)
    defer { try? store.close() }
    let keys = try RNCryptor.Keys.random()
    try store.rekeyedCopy(to: Self.destination, keys: keys)
    let copy = try CaskStore(path: Self.destination, keys: keys, options: FaultWorkload.options(fileSystem))
    FaultWorkload.expect(try FaultWorkload.contents(of: copy), isOneOf: [model], "keys")
    try copy.close()
  }

  @Test("an existing destination is refused and nothing is written; a full disk leaves nothing behind")
  func refusedAndFull() throws {
    var random = SeededRandom.make(test: "rekeyed copy refused")
    let (fileSystem, store, model) = try FaultWorkload.prepared(&random)
    defer { try? store.close() }
    try fileSystem.createDirectory("/data/taken")
    for taken in ["/data/taken", FaultWorkload.path] {
      do {
        try store.rekeyedCopy(to: taken, password: Self.newPassword)
        Issue.record("\(taken) was not refused")
      } catch CaskError.io(_, _, let code) {
        #expect(code == EEXIST)
      }
    }
    #expect(try fileSystem.contentsOfDirectory("/data/taken").isEmpty)
    for (bad, expected) in [("", ENOENT), ("\(FaultWorkload.path)/inner", EINVAL)] {
      do {
        try store.rekeyedCopy(to: bad, password: Self.newPassword)
        Issue.record("'\(bad)' was not refused")
      } catch CaskError.io(_, _, let code) {
        #expect(code == expected, "'\(bad)'")
      }
    }
    #expect(fileSystem.fileKind("\(FaultWorkload.path)/inner") == .missing)
    #expect(throws: CaskError.self) { try store.rekeyedCopy(to: Self.destination, password: "") }
    fileSystem.setFreeBytes(2000)
    do {
      try store.rekeyedCopy(to: Self.destination, password: Self.newPassword)
      Issue.record("the copy did not fail on a full disk")
    } catch CaskError.io(_, _, let code) {
      #expect(code == ENOSPC)
    }
    #expect(fileSystem.fileKind("/data/new") == .missing, "the directories it made are gone")
    fileSystem.setFreeBytes(nil)
    try store.rekeyedCopy(to: Self.destination, password: Self.newPassword)
    FaultWorkload.expect(try FaultWorkload.contents(of: try Self.openCopy(fileSystem)), isOneOf: [model], "after")
  }

  @Test("a crash at any point leaves no destination or the whole copy, and the store as it was")
  func crashDuringCopy() throws {
    var random = SeededRandom.make(test: "crash during rekeyed copy")
    let (base, store, model) = try FaultWorkload.prepared(&random)
    try store.close()
    var point = 1
    var finished = false
    var crashes = 0
    while !finished {
      let context = "crash at mutation \(point)"
      let fileSystem = base.snapshot()
      let reopened = try FaultWorkload.open(FaultWorkload.options(fileSystem))
      fileSystem.scheduleCrash(afterMutations: point)
      do {
        try reopened.rekeyedCopy(to: Self.destination, password: Self.newPassword)
      } catch {
        #expect(fileSystem.isPoweredOff, "\(context): failed without a fault: \(error)")
      }
      finished = !fileSystem.isPoweredOff
      let survivor = fileSystem.crash(using: &random)
      if survivor.fileKind(Self.destination) != .missing {
        let copy = try Self.openCopy(survivor)
        FaultWorkload.expect(try FaultWorkload.contents(of: copy), isOneOf: [model], "\(context): the copy")
        try copy.close()
      } else {
        #expect(!finished, "\(context): a finished copy is missing")
      }
      let original = try FaultWorkload.open(FaultWorkload.options(survivor))
      FaultWorkload.expect(try FaultWorkload.contents(of: original), isOneOf: [model], "\(context): the original")
      try original.close()
      crashes += 1
      point += Int.random(in: 1...4, using: &random)
    }
    #expect(crashes > 3)
  }

  @Test("a destination name of 255 bytes works: the hidden name is cut to fit")
  func longestName() throws {
    try withTemporaryDirectory("rekey-long-name") { directory throws in
      let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      try store.put(Data("v".utf8), forKey: "k")
      let name = String(repeating: "é", count: 127) + "x"
      #expect(name.utf8.count == 255)
      try store.rekeyedCopy(to: directory.file(name), password: Self.newPassword)
      let copy = try CaskStore(path: directory.file(name), password: Self.newPassword)
      #expect(try copy.get("k") == Data("v".utf8))
      try copy.close()
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [name, "s.cask"].sorted())
    }
  }

  // MARK: What is planted beside the copy on the real file system
  //
  // Someone who can write the destination's parent plants something at the hidden directory's
  // name, or at the destination while the copy is built: it is neither used, nor emptied, nor
  // silently replaced.

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
    try withTemporaryDirectory("rekey-planted-link") { directory throws in
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
  }

  @Test("a directory already at the hidden directory's name is neither used for the copy nor emptied")
  func plantedDirectoryAtHiddenName() throws {
    try withTemporaryDirectory("rekey-planted-dir") { directory throws in
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
  }

  @Test("an empty directory made at the destination while the copy is built is not replaced by the rename")
  func destinationAppearsDuringCopy() throws {
    try withTemporaryDirectory("rekey-late-destination") { directory throws in
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
}

/// Prevents: the copy written in key order, whose record sizes and sequence numbers told anyone
/// holding the files how the keys sort (where each collection starts, the order of ids).
/// Encrypted `cask export` shuffles for the same reason.
@Suite("Rekeyed copy: record order")
struct RekeyOrderTests {
  @Test("the copy's records are not written in the order of their keys")
  func recordsAreNotInKeyOrder() throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let store = try FaultWorkload.open(FaultWorkload.options(fileSystem, durability: .never, segmentSizeLimit: 1 << 20))
    defer { try? store.close() }
    for index in 0..<50 { try store.put(Data("value \(index)".utf8), forKey: String(format: "user\u{0}%03d", index)) }
    try store.rekeyedCopy(to: RekeyTests.destination, password: RekeyTests.newPassword)
    let copy = try CaskStore(
      path: RekeyTests.destination, password: RekeyTests.newPassword, options: FaultWorkload.options(fileSystem))
    defer { try? copy.close() }
    let written = copy.state.withLock { state in
      state.segments.keys.flatMap { segment in
        state.directory.hintEntries(inSegment: segment).list.map { (segment: segment, offset: $0.offset, key: $0.key) }
      }
    }
    .sorted { ($0.segment, $0.offset) < ($1.segment, $1.offset) }
    .map(\.key)
    #expect(written.count == 50)
    #expect(written != written.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, "the copy is in key order")
  }
}

import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CaskEngine

/// `backup(to:)`: a copy of an open store, taken while it is used, is a store of its own that
/// holds exactly one moment of the original; a copy cut short (crash, full disk) is never
/// taken for a whole one, and a failed copy leaves nothing behind.
@Suite("Online backup")
struct BackupTests {
  static let destination = "/data/copies/backup.cask"

  /// Opens a copy, never making one: a directory without a whole copy is `notACaskStore`, no
  /// directory at all `storeNotFound`.
  private static func openCopy(_ fileSystem: FaultyFileSystem, _ path: String = destination) throws -> CaskStore {
    var options = FaultWorkload.options(fileSystem)
    options.createIfMissing = false
    return try CaskStore(path: path, password: FaultWorkload.password, options: options)
  }

  @Test("the copy opens with the same password and holds what the store held; both go on independently")
  func roundTrip() throws {
    var random = SeededRandom.make(test: "backup round trip")
    for iteration in 0..<testIterations(4) {
      let (fileSystem, store, model) = try FaultWorkload.prepared(&random, readOnly: iteration % 2 == 1)
      let report = try store.backup(to: Self.destination)
      let names = try fileSystem.contentsOfDirectory(Self.destination)
      #expect(report.segments == names.filter { $0.hasSuffix(".seg") }.count, "iteration \(iteration)")
      #expect(report.hints == names.filter { $0.hasSuffix(".hint") }.count, "iteration \(iteration)")
      #expect(report.segments == store.stats().segments, "iteration \(iteration)")
      let bytes = names.reduce(0) { $0 + UInt64(fileSystem.contents(of: "\(Self.destination)/\($1)")?.count ?? 0) }
      #expect(report.bytes == bytes, "iteration \(iteration)")
      let copy = try Self.openCopy(fileSystem)
      FaultWorkload.expect(try FaultWorkload.contents(of: copy), isOneOf: [model], "iteration \(iteration)")
      #expect(try copy.verify().damage.isEmpty)
      #expect(copy.stats().recovery.segmentsScanned <= 1, "only the segment that was being appended to is scanned")
      try copy.put(Data("copy".utf8), forKey: "only-in-copy")
      if iteration % 2 == 0 { try store.put(Data("original".utf8), forKey: "only-in-original") }
      #expect(try store.get("only-in-copy") == nil)
      #expect(try copy.get("only-in-original") == nil)
      try copy.close()
      try store.close()
    }
  }

  @Test(
    "a crash at any point of a backup leaves a whole copy or a directory that is not a store, and the store as it was")
  func crashDuringBackup() throws {
    var random = SeededRandom.make(test: "crash during backup")
    for iteration in 0..<testIterations(2) {
      let (base, store, model) = try FaultWorkload.prepared(&random)
      try store.close()
      var point = 1
      var finished = false
      var crashes = 0
      while !finished {
        let context = "iteration \(iteration), crash at mutation \(point)"
        let fileSystem = base.snapshot()
        let reopened = try FaultWorkload.open(FaultWorkload.options(fileSystem))
        fileSystem.scheduleCrash(afterMutations: point)
        do {
          try reopened.backup(to: Self.destination)
        } catch {
          #expect(fileSystem.isPoweredOff, "\(context): backup failed without a fault: \(error)")
        }
        finished = !fileSystem.isPoweredOff
        let survivor = fileSystem.crash(using: &random)
        do {
          let copy = try Self.openCopy(survivor)
          FaultWorkload.expect(try FaultWorkload.contents(of: copy), isOneOf: [model], "\(context): the copy")
          #expect(try copy.verify().damage.isEmpty, "\(context)")
          try copy.close()
        } catch CaskError.notACaskStore, CaskError.storeNotFound {
          #expect(!finished, "\(context): a finished backup is not a store")
        }
        let original = try FaultWorkload.open(FaultWorkload.options(survivor))
        FaultWorkload.expect(try FaultWorkload.contents(of: original), isOneOf: [model], "\(context): the original")
        try original.close()
        crashes += 1
        point += Int.random(in: 1...3, using: &random)
      }
      #expect(crashes > 3, "a backup took fewer file operations than expected")
    }
  }

  @Test("a full disk fails the backup with ENOSPC and removes what it wrote, made directories included")
  func fullDisk() throws {
    var random = SeededRandom.make(test: "backup on a full disk")
    let (fileSystem, store, model) = try FaultWorkload.prepared(&random)
    defer { try? store.close() }
    // Room for about half of the store's files: the copy fails part-way.
    let size = try fileSystem.contentsOfDirectory(FaultWorkload.path).reduce(0) {
      $0 + (fileSystem.contents(of: "\(FaultWorkload.path)/\($1)")?.count ?? 0)
    }
    fileSystem.setFreeBytes(UInt64(size / 2))
    do {
      try store.backup(to: Self.destination)
      Issue.record("the backup did not fail")
    } catch CaskError.io(_, _, let code) {
      #expect(code == ENOSPC)
    }
    #expect(fileSystem.fileKind(Self.destination) == .missing)
    #expect(fileSystem.fileKind("/data/copies") == .missing, "the parent it made is removed too")
    FaultWorkload.expect(try FaultWorkload.contents(of: store), isOneOf: [model], "the store")
    fileSystem.setFreeBytes(nil)
    try store.backup(to: Self.destination)
    FaultWorkload.expect(try FaultWorkload.contents(of: try Self.openCopy(fileSystem)), isOneOf: [model], "the copy")
  }

  @Test("a destination that is a file or a directory with files in it is refused and left alone; an empty one is used")
  func destinations() throws {
    var random = SeededRandom.make(test: "backup destinations")
    let (fileSystem, store, model) = try FaultWorkload.prepared(&random, steps: 5...10)
    defer { try? store.close() }
    try fileSystem.createDirectory("/data/full")
    let keep = try fileSystem.open("/data/full/notes.txt", mode: .createNew)
    try keep.write(Data("mine".utf8), at: 0)
    keep.close()
    for refused in ["/data/full", "/data/full/notes.txt", FaultWorkload.path] {
      do {
        try store.backup(to: refused)
        Issue.record("\(refused) was not refused")
      } catch CaskError.io(_, _, let code) {
        #expect(code == EEXIST, "\(refused)")
      }
    }
    #expect(try fileSystem.contentsOfDirectory("/data/full") == ["notes.txt"])
    #expect(fileSystem.contents(of: "/data/full/notes.txt") == Array("mine".utf8))
    try fileSystem.createDirectory("/data/empty")
    try store.backup(to: "/data/empty")
    FaultWorkload.expect(
      try FaultWorkload.contents(of: try Self.openCopy(fileSystem, "/data/empty")), isOneOf: [model], "empty dir")
    try store.close()
    #expect(throws: CaskError.self) { try store.backup(to: "/data/after-close") }
    #expect(fileSystem.fileKind("/data/after-close") == .missing)
  }

  @Test("copies taken while writers commit batches and compaction runs each hold one whole batch, never a mix")
  func whileWritingAndCompacting() throws {
    try withTemporaryDirectory("backup-live") { directory throws in
      let options = CaskStore.Options(durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)
      let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: options)
      defer { try? store.close() }
      let keys = (0..<10).map { "key-\($0)" }
      let acknowledged = Atomic(0)
      let stop = Atomic(false)
      let writerFailure = Locked<String?>(nil)
      let writer = Thread {
        var round = 0
        do {
          while !stop.load(ordering: .acquiring) {
            round += 1
            try store.batch { batch in
              for key in keys {
                try batch.put(Data("round \(round) \(String(repeating: "x", count: 200))".utf8), forKey: key)
              }
            }
            acknowledged.store(round, ordering: .releasing)
            if round % 7 == 0 { try store.compact() }
          }
        } catch {
          writerFailure.withLock { $0 = "\(error)" }
        }
      }
      writer.start()
      defer { stop.store(true, ordering: .releasing) }
      var rounds: [Int] = []
      for copy in 0..<4 {
        // A writer that failed (recorded below) stops here instead of hanging the test.
        waitUntil { acknowledged.load(ordering: .acquiring) >= (copy + 1) * 20 || writer.isFinished }
        let before = acknowledged.load(ordering: .acquiring)
        let path = directory.file("copy-\(copy).cask")
        try store.backup(to: path)
        let restored = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
        let values = Set(try keys.map { try restored.get($0).map { String(decoding: $0, as: UTF8.self) } ?? "missing" })
        #expect(values.count == 1, "copy \(copy) mixes batches: \(values.map { $0.prefix(12) })")
        let round = values.first.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        #expect(round >= before, "copy \(copy) holds round \(round), older than round \(before) acknowledged before it")
        #expect(try restored.verify().damage.isEmpty)
        try restored.close()
        rounds.append(round)
      }
      stop.store(true, ordering: .releasing)
      #expect(waitUntil { writer.isFinished }, "the writer did not stop")
      #expect(writerFailure.withLock { $0 } == nil)
      #expect(rounds == rounds.sorted(), "later copies hold no earlier rounds: \(rounds)")
    }
  }

  // MARK: On the real file system

  private static let realOptions = CaskStore.Options(durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)

  /// Puts `count` keys with values of about 300 bytes (several segments at 4 KiB); returns them.
  private static func fillReal(_ store: CaskStore, prefix: String, count: Int) throws -> [String: Data] {
    var values: [String: Data] = [:]
    for index in 0..<count {
      let value = Data("\(prefix) \(index) \(String(repeating: "v", count: 300))".utf8)
      try store.put(value, forKey: "\(prefix)-\(index)")
      values["\(prefix)-\(index)"] = value
    }
    return values
  }

  private static func realContents(_ path: String, password: String) throws -> [String: Data] {
    var options = CaskStore.Options(durability: .never)
    options.createIfMissing = false
    let store = try CaskStore(path: path, password: password, options: options)
    defer { try? store.close() }
    var contents: [String: Data] = [:]
    for key in try store.keys() { contents[key] = try store.get(key) }
    return contents
  }

  @Test("a hint that open passes over (here a symbolic link) does not fail the backup; the copy scans instead")
  func unreadableHintIsLeftOut() throws {
    try withTemporaryDirectory("backup-linked-hint") { directory throws in
      let path = directory.file("s.cask")
      let store = try CaskStore(path: path, password: "pw", options: Self.realOptions)
      let values = try Self.fillReal(store, prefix: "key", count: 20)
      try store.close()
      let hint = "\(path)/\(Segment.hintName(id: 1))"
      try FileManager.default.moveItem(atPath: hint, toPath: directory.file("moved.hint"))
      try FileManager.default.createSymbolicLink(atPath: hint, withDestinationPath: directory.file("moved.hint"))
      // `cask backup` opens read-only: the link stays, and the open scans segment 1.
      var readOnly = Self.realOptions
      readOnly.readOnly = true
      let reader = try CaskStore(path: path, password: "pw", options: readOnly)
      defer { try? reader.close() }
      #expect(reader.stats().recovery.segmentsScanned == 1)
      try reader.backup(to: directory.file("copy.cask"))
      #expect(try Self.realContents(directory.file("copy.cask"), password: "pw") == values)
    }
  }

  @Test("under .always the copy of the segment being appended to ends at its last record, not in reserved zeros")
  func reservedSpaceIsNotCopied() throws {
    try withTemporaryDirectory("backup-reserved-space") { directory throws in
      let path = directory.file("s.cask")
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .always, autoCompaction: nil))
      defer { try? store.close() }
      let values = try Self.fillReal(store, prefix: "key", count: 10)
      let segment = "\(path)/\(Segment.fileName(id: 1))"
      #expect(try FileDamage.size(of: segment) >= 1 << 20, "the writer reserved space ahead")
      let copy = directory.file("copy.cask")
      let report = try store.backup(to: copy)
      #expect(report.segments == 1 && report.hints == 0)
      #expect(try FileDamage.size(of: "\(copy)/\(Segment.fileName(id: 1))") < 1 << 14)
      let reopened = try CaskStore(path: copy, password: "pw", options: .init(durability: .never))
      defer { try? reopened.close() }
      let recovery = reopened.stats().recovery
      #expect(recovery.zeroTailBytes == 0 && recovery.truncatedBytes == 0 && recovery.corruptRegions.isEmpty)
      #expect(try reopened.verify().isClean)
      var contents: [String: Data] = [:]
      for key in try reopened.keys() { contents[key] = try reopened.get(key) }
      #expect(contents == values)
    }
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// `CaskStore.upgrade(at:password:)`: a version 2, 3 or 4 store becomes version 5 in place with
/// every key and value, and a crash at any step leaves a store that opens with all of them.
@Suite("Upgrading a store from format version 2, 3 or 4 to 5")
struct UpgradeTests {
  /// A version 2 store on a faulty disk, written through several segments with overwrites and
  /// deletes, closed; and its model.
  private static func version2Store(_ random: inout SeededRandom) throws -> (FaultyFileSystem, [String: Data]) {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    var options = FaultWorkload.options(fileSystem, durability: .never)
    options.newStoreFormatVersion = 2
    var store = try FaultWorkload.open(options)
    var model: [String: Data] = [:]
    var serial = 0
    for _ in 0..<40 {
      let step = FaultWorkload.step(random: &random, serial: &serial, maintenance: false)
      try FaultWorkload.run(step, on: &store, options: options)
      model = FaultWorkload.applying(step, to: model)
    }
    try store.close()
    return (fileSystem, model)
  }

  private static func version(of path: String, _ fileSystem: any FileSystem) throws -> UInt16 {
    let header = "\(path)/\(CaskFormat.headerFileName)"
    return try StoreHeader.decode(CaskStore.contents(of: header, fileSystem: fileSystem), path: header).version
  }

  private static func hiddenDirectories(_ fileSystem: any FileSystem) throws -> [String] {
    try fileSystem.contentsOfDirectory(FaultWorkload.directory).filter { $0.hasPrefix(".") }
  }

  /// The type and length of the last record of the store's newest segment.
  private static func lastRecord(_ fileSystem: any FileSystem) throws -> (type: UInt8, length: Int) {
    let path = FaultWorkload.path
    let segments = try fileSystem.contentsOfDirectory(path).filter { $0.hasSuffix("." + CaskFormat.segmentExtension) }
    let name = try #require(segments.sorted().last)
    let bytes = [UInt8](try CaskStore.contents(of: "\(path)/\(name)", fileSystem: fileSystem))
    let record = try #require(TamperDetectionTests.records(bytes).last)
    return (bytes[record.lowerBound + 4], record.count)
  }

  @Test("a version 2 store becomes version 5 with every key and value, the same password, data key and derivation")
  func upgradeRoundTrip() throws {
    var random = SeededRandom.make(test: "upgrade round trip")
    let (fileSystem, model) = try Self.version2Store(&random)
    let path = FaultWorkload.path
    let before = try StoreHeader.decode(
      CaskStore.contents(of: "\(path)/CASK", fileSystem: fileSystem), path: "\(path)/CASK")
    let report = try CaskStore.upgrade(
      at: path, password: FaultWorkload.password, options: FaultWorkload.options(fileSystem))
    #expect(report.upgraded && report.previousVersion == 2 && report.version == 5)
    #expect(report.keys == model.count)
    #expect(report.removedLeftovers.isEmpty)
    #expect(try Self.version(of: path, fileSystem) == 5)
    let after = try StoreHeader.decode(
      CaskStore.contents(of: "\(path)/CASK", fileSystem: fileSystem), path: "\(path)/CASK")
    // Wrapped again (the version is bound into the wrapped key), the same key the same way.
    #expect(after.keyDerivation == before.keyDerivation)
    let credential = StoreCredential.password(SecureBytes(utf8: FaultWorkload.password))
    #expect(
      StoreCredential.concatenate(try credential.unwrap(after, path: "")).constantTimeEquals(
        StoreCredential.concatenate(try credential.unwrap(before, path: ""))), "the data key changed")
    #expect(after.identity != nil && after.authenticator != nil)
    #expect(fileSystem.fileKind("\(path)/\(CaskFormat.manifestFileName)") == .file)
    #expect(try Self.hiddenDirectories(fileSystem).isEmpty)
    let store = try FaultWorkload.open(FaultWorkload.options(fileSystem))
    defer { try? store.close() }
    FaultWorkload.expect(try FaultWorkload.contents(of: store), isOneOf: [model], "after the upgrade")
    #expect(try store.verify().damage.isEmpty)
  }

  @Test("a store wrapped under keys is upgraded with the keys and opens with them only")
  func upgradeWithKeys() throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    var options = FaultWorkload.options(fileSystem, durability: .never)
    options.newStoreFormatVersion = 2
    let keys = try RNCryptor.Keys.random()
    let store = try CaskStore(path: FaultWorkload.path, keys: keys, options: options)
    try store.put(Data("v".utf8), forKey: "k")
    try store.close()
    #expect(throws: CaskError.wrongCredentialType) {
      try CaskStore.upgrade(at: FaultWorkload.path, password: "pw", options: options)
    }
    #expect(try CaskStore.upgrade(at: FaultWorkload.path, keys: keys, options: options).upgraded)
    #expect(try Self.version(of: FaultWorkload.path, fileSystem) == 5)
    let upgraded = try CaskStore(path: FaultWorkload.path, keys: keys, options: options)
    defer { try? upgraded.close() }
    #expect(upgraded.keyDerivation == nil)
    #expect(try upgraded.get("k") == Data("v".utf8))
  }

  @Test("version 3 and 4 stores become version 5 with every value; a version 4 tombstone reads, later ones are short")
  func upgradeFromThreeAndFour() throws {
    for changesPassword in [false, true] {
      let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      var options = FaultWorkload.options(fileSystem, durability: .never)
      options.newStoreFormatVersion = 3
      options.segmentSizeLimit = 1024
      let store = try FaultWorkload.open(options)
      for index in 0..<20 { try store.put(Data(repeating: UInt8(index), count: 200), forKey: "k\(index)") }
      if changesPassword {
        try store.changePassword(to: FaultWorkload.password)
        try store.delete("k0")
      }
      try store.close()
      // A delete of a 2-byte key: the long binding's tombstone (56 + 2 bytes sealed).
      let longTombstone = CaskFormat.recordHeaderLength + RecordCipher.messageLength(plaintextLength: 56 + 2)
      if changesPassword {
        #expect(try Self.lastRecord(fileSystem) == (CaskFormat.recordTypeDelete, longTombstone))
        let reopened = try FaultWorkload.open(options)
        #expect(try reopened.get("k0") == nil)
        #expect(reopened.count == 19)
        try reopened.close()
      }
      let previous: UInt16 = changesPassword ? 4 : 3
      #expect(try Self.version(of: FaultWorkload.path, fileSystem) == previous)
      let report = try CaskStore.upgrade(
        at: FaultWorkload.path, password: FaultWorkload.password, options: FaultWorkload.options(fileSystem))
      #expect(report.upgraded && report.previousVersion == previous && report.version == 5)
      #expect(report.keys == (changesPassword ? 19 : 20))
      #expect(try Self.version(of: FaultWorkload.path, fileSystem) == 5)
      let upgraded = try FaultWorkload.open(FaultWorkload.options(fileSystem))
      defer { try? upgraded.close() }
      #expect(try upgraded.get("k5") == Data(repeating: 5, count: 200))
      #expect(upgraded.count == report.keys)
      #expect(try upgraded.verify().damage.isEmpty)
      // A delete in the upgraded store is a short tombstone (22 + 2 bytes sealed).
      try upgraded.delete("k1")
      try upgraded.close()
      let shortTombstone = CaskFormat.recordHeaderLength + RecordCipher.messageLength(plaintextLength: 22 + 2)
      #expect(shortTombstone < longTombstone)
      #expect(try Self.lastRecord(fileSystem) == (CaskFormat.recordTypeDelete, shortTombstone))
      let again = try FaultWorkload.open(FaultWorkload.options(fileSystem))
      defer { try? again.close() }
      #expect(try again.get("k1") == nil)
      #expect(again.count == report.keys - 1)
      #expect(try again.verify().isClean)
    }
  }

  @Test("a version 5 store is left as it is, every file unchanged")
  func currentVersionIsANoOp() throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let store = try FaultWorkload.open(FaultWorkload.options(fileSystem))
    try store.put(Data("v".utf8), forKey: "k")
    try store.close()
    let before = try FileSystemState(of: FaultWorkload.path, fileSystem: fileSystem)
    let report = try CaskStore.upgrade(
      at: FaultWorkload.path, password: FaultWorkload.password, options: FaultWorkload.options(fileSystem))
    #expect(!report.upgraded && report.previousVersion == 5 && report.version == 5 && report.keys == 0)
    #expect(try FileSystemState(of: FaultWorkload.path, fileSystem: fileSystem) == before)
  }

  @Test("a store whose lock is held elsewhere is refused with locked, and nothing is left beside it")
  func lockedStoreIsRefused() throws {
    var random = SeededRandom.make(test: "upgrade locked")
    let (fileSystem, _) = try Self.version2Store(&random)
    let held = try fileSystem.lock("\(FaultWorkload.path)/\(CaskFormat.lockFileName)", exclusive: true)
    #expect(throws: CaskError.locked(path: "\(FaultWorkload.path)/\(CaskFormat.lockFileName)")) {
      try CaskStore.upgrade(
        at: FaultWorkload.path, password: FaultWorkload.password, options: FaultWorkload.options(fileSystem))
    }
    held.unlock()
    #expect(try Self.version(of: FaultWorkload.path, fileSystem) == 2)
    #expect(try Self.hiddenDirectories(fileSystem).isEmpty)
  }

  @Test("a write between the copy and the lock stops the upgrade before the swap; the write stays")
  func writeAfterTheCopyIsNotLost() throws {
    var random = SeededRandom.make(test: "upgrade raced")
    let (fileSystem, model) = try Self.version2Store(&random)
    let options = FaultWorkload.options(fileSystem)
    var asked = 0
    #expect(throws: CaskError.locked(path: FaultWorkload.path)) {
      try CaskStore.upgrade(at: FaultWorkload.path, password: FaultWorkload.password, options: options) {
        asked += 1
        // The last question comes after the copy, with the store closed: another writer
        // gets in here.
        if asked == model.count + 1 {
          guard let writer = try? FaultWorkload.open(options) else { return true }
          try? writer.put(Data("late".utf8), forKey: "late")
          try? writer.close()
        }
        return true
      }
    }
    #expect(try Self.version(of: FaultWorkload.path, fileSystem) == 2)
    #expect(try Self.hiddenDirectories(fileSystem).isEmpty)
    let store = try FaultWorkload.open(options)
    defer { try? store.close() }
    #expect(try store.get("late") == Data("late".utf8))
  }

  @Test("cancelling the upgrade removes the copy and leaves the version 2 store")
  func cancellation() throws {
    var random = SeededRandom.make(test: "upgrade cancelled")
    let (fileSystem, _) = try Self.version2Store(&random)
    var asked = 0
    #expect(throws: CancellationError.self) {
      try CaskStore.upgrade(
        at: FaultWorkload.path, password: FaultWorkload.password, options: FaultWorkload.options(fileSystem)
      ) {
        asked += 1
        return asked < 3
      }
    }
    #expect(try Self.version(of: FaultWorkload.path, fileSystem) == 2)
    #expect(try Self.hiddenDirectories(fileSystem).isEmpty)
  }

  @Test("a crash at any step leaves a store that opens with every value; the next upgrade finishes and cleans up")
  func crashAtEveryStep() throws {
    var random = SeededRandom.make(test: "upgrade crash")
    let (base, model) = try Self.version2Store(&random)
    var versions: Set<UInt16> = []
    var leftoversRemoved = 0
    var point = 1
    var finished = false
    while !finished {
      let context = "crash at mutation \(point)"
      let fileSystem = base.snapshot()
      fileSystem.scheduleCrash(afterMutations: point)
      do {
        try CaskStore.upgrade(
          at: FaultWorkload.path, password: FaultWorkload.password, options: FaultWorkload.options(fileSystem))
      } catch {
        #expect(fileSystem.isPoweredOff, "\(context): the upgrade failed without a fault: \(error)")
      }
      finished = !fileSystem.isPoweredOff
      let survivor = fileSystem.crash(using: &random)
      let options = FaultWorkload.options(survivor)
      versions.insert(try Self.version(of: FaultWorkload.path, survivor))
      let store = try FaultWorkload.open(options)
      FaultWorkload.expect(try FaultWorkload.contents(of: store), isOneOf: [model], context)
      try store.close()
      let again = try CaskStore.upgrade(at: FaultWorkload.path, password: FaultWorkload.password, options: options)
      leftoversRemoved += again.removedLeftovers.count
      let hidden = try Self.hiddenDirectories(survivor)
      #expect(hidden.isEmpty, "\(context): \(hidden)")
      #expect(try Self.version(of: FaultWorkload.path, survivor) == 5)
      let upgraded = try FaultWorkload.open(options)
      FaultWorkload.expect(try FaultWorkload.contents(of: upgraded), isOneOf: [model], "\(context), upgraded again")
      try upgraded.close()
      point += Int.random(in: 1...3, using: &random)
    }
    #expect(versions == [2, 5], "crashes left only versions \(versions)")
    #expect(leftoversRemoved > 0, "no crash left a hidden directory for the next upgrade to remove")
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A password change starts a new key epoch (Docs/FORMAT.md, section 3a): an old header, with
/// the old password, opens nothing written after the change, and nothing at all once
/// compaction has sealed the older records again under the current key.
@Suite("A password change rotates the data key")
struct KeyEpochTests {
  static var options: CaskStore.Options {
    var options = CaskStore.Options(durability: .never, segmentSizeLimit: 600, autoCompaction: nil)
    options.keyDerivation = testKeyDerivation
    return options
  }

  static func header(_ path: String) -> String { "\(path)/\(CaskFormat.headerFileName)" }

  static func value(_ text: String) -> Data { Data(text.utf8) }

  /// Puts `count` keys `old-N` (several segments), changes the password to "new" and puts `new-N`.
  /// Returns the old header's bytes, taken before the change.
  static func rotated(_ path: String, count: Int = 20) throws -> Data {
    let store = try CaskStore(path: path, password: "old", options: options)
    for index in 0..<count { try store.put(value("old value \(index)"), forKey: "old-\(index)") }
    let oldHeader = try Data(contentsOf: URL(fileURLWithPath: header(path)))
    try store.changePassword(to: "new")
    for index in 0..<count { try store.put(value("new value \(index)"), forKey: "new-\(index)") }
    try store.close()
    return oldHeader
  }

  /// Opens `path` read-only with `password` for salvage (integrity violations allowed).
  static func salvage(_ path: String, password: String) throws -> CaskStore {
    var options = options
    options.allowIntegrityViolations = true
    return try CaskStore(path: path, password: password, options: options)
  }

  @Test("after passwd, records written after the change are not readable with the old header and old password")
  func oldHeaderDoesNotOpenNewWrites() throws {
    try withTemporaryDirectory("epochs-old-header") { directory in
      let path = directory.file("store.cask")
      let oldHeader = try Self.rotated(path)
      try oldHeader.write(to: URL(fileURLWithPath: Self.header(path)))
      #expect(throws: CaskError.self) { try CaskStore(path: path, password: "new", options: Self.options) }
      do {
        let store = try CaskStore(path: path, password: "old", options: Self.options)
        try store.close()
        Issue.record("the old header and password opened the store")
      } catch CaskError.integrityViolation(_, let reason) {
        #expect(reason.contains("manifest") || reason.contains("key epoch"), "\(reason)")
      }
      // Salvage with the old header: only records written before the change.
      let store = try Self.salvage(path, password: "old")
      defer { try? store.close() }
      #expect(try store.keys().allSatisfy { $0.hasPrefix("old-") })
      #expect(try store.get("new-3") == nil)
      #expect(try store.get("old-3") == Self.value("old value 3"))
      #expect(!store.stats().recovery.unreadableSegments.isEmpty, "the new segments must be reported, not read")
    }
  }

  @Test("records written before passwd stay readable with the new password before compaction")
  func olderRecordsReadableWithNewPassword() throws {
    try withTemporaryDirectory("epochs-before-compaction") { directory in
      let path = directory.file("store.cask")
      _ = try Self.rotated(path)
      let store = try CaskStore(path: path, password: "new", options: Self.options)
      for index in 0..<20 {
        #expect(try store.get("old-\(index)") == Self.value("old value \(index)"))
        #expect(try store.get("new-\(index)") == Self.value("new value \(index)"))
      }
      #expect(try store.verify().isClean)
      #expect(store.keyEpochs.currentEpoch == 1)
      #expect(store.keyEpochs.olderEpochs == [0])
      try store.close()
      #expect(throws: CaskError.wrongPassword) { try CaskStore(path: path, password: "old", options: Self.options) }
    }
  }

  @Test("after compaction finishes the rotation, the old header opens nothing current")
  func oldHeaderOpensNothingAfterRotation() throws {
    try withTemporaryDirectory("epochs-after-compaction") { directory in
      let path = directory.file("store.cask")
      let oldHeader = try Self.rotated(path)
      let store = try CaskStore(path: path, password: "new", options: Self.options)
      #expect(try store.rotateKeys() != nil)
      #expect(store.keyEpochs.isRotated)
      #expect(try store.rotateKeys() == nil, "nothing is left to rotate")
      try store.close()
      let reopened = try CaskStore(path: path, password: "new", options: Self.options)
      #expect(reopened.keyEpochs.olderEpochs.isEmpty, "the header still holds an older key")
      #expect(try reopened.get("old-7") == Self.value("old value 7"))
      #expect(try reopened.verify().isClean)
      try reopened.close()
      try oldHeader.write(to: URL(fileURLWithPath: Self.header(path)))
      #expect(throws: CaskError.self) { try CaskStore(path: path, password: "old", options: Self.options) }
      let salvaged = try Self.salvage(path, password: "old")
      defer { try? salvaged.close() }
      #expect(salvaged.count == 0, "the old header read records after the rotation")
      #expect(try salvaged.get("old-7") == nil)
    }
  }

  @Test("the status counts the records still under an older epoch, and reaches zero")
  func statusReachesZero() throws {
    try withStore(options: Self.options, password: "old", label: "epochs-status") { store, path in
      for index in 0..<30 { try store.put(Self.value("value \(index)"), forKey: "key-\(index)") }
      try store.delete("key-0")
      #expect(
        store.keyEpochs
          == KeyEpochStatus(
            currentEpoch: 0, olderEpochs: [], olderSegments: 0, olderRecords: 0, olderBytes: 0))
      try store.changePassword(to: "new")
      let after = store.keyEpochs
      #expect(after.currentEpoch == 1 && after.olderEpochs == [0])
      #expect(after.olderRecords == 29)
      #expect(after.olderSegments > 1)
      #expect(after.olderBytes > 29 * 100)
      // Overwritten keys leave the older epoch.
      for index in 1...9 { try store.put(Self.value("again \(index)"), forKey: "key-\(index)") }
      #expect(store.keyEpochs.olderRecords == 20)
      try store.rotateKeys()
      #expect(
        store.keyEpochs
          == KeyEpochStatus(
            currentEpoch: 1, olderEpochs: [], olderSegments: 0, olderRecords: 0, olderBytes: 0))
      #expect(try store.get("key-12") == Self.value("value 12"))
    }
  }

  @Test("two password changes before a compaction keep every epoch readable, and one compaction rotates both")
  func twoChangesBeforeCompaction() throws {
    try withStore(options: Self.options, password: "first", label: "epochs-two") { store, path in
      try store.put(Self.value("a"), forKey: "a")
      try store.changePassword(to: "second")
      try store.put(Self.value("b"), forKey: "b")
      try store.changeKeys(to: try RNCryptor.Keys.random())
      try store.put(Self.value("c"), forKey: "c")
      #expect(store.keyEpochs.currentEpoch == 2)
      #expect(store.keyEpochs.olderEpochs == [0, 1])
      #expect(store.keyEpochs.olderRecords == 2)
      try store.rotateKeys()
      #expect(store.keyEpochs.isRotated)
      #expect(try store.get("a") == Self.value("a"))
      #expect(try store.get("b") == Self.value("b"))
      #expect(try store.get("c") == Self.value("c"))
    }
  }

  @Test("an empty store's password change leaves no older key once a manifest is under the new one")
  func emptyStoreRotation() throws {
    try withStore(options: Self.options, password: "old", label: "epochs-empty") { store, path in
      try store.changePassword(to: "new")
      #expect(store.keyEpochs.olderEpochs.isEmpty)
      try store.put(Self.value("x"), forKey: "x")
      try store.close()
      let reopened = try CaskStore(path: path, password: "new", options: Self.options)
      #expect(try reopened.get("x") == Self.value("x"))
      try reopened.close()
    }
  }

  @Test("a segment whose header names another key epoch than the manifest's is refused")
  func segmentEpochChanged() throws {
    try withTemporaryDirectory("epochs-forged-epoch") { directory in
      let path = directory.file("store.cask")
      _ = try Self.rotated(path)
      // The newest segment is under epoch 1; say epoch 0 (CRC fixed), as someone holding the
      // old key would to pass off records sealed under it.
      let newest = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.max()!
      let url = URL(fileURLWithPath: "\(path)/\(newest)")
      var bytes = try Data(contentsOf: url)
      #expect(bytes[CaskFormat.segmentEpochOffset] == 1)
      bytes[CaskFormat.segmentEpochOffset] = 0
      let crc = CRC32C.checksum(Array(bytes.prefix(CaskFormat.segmentHeaderChecksummedLength)))
      withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(28..<32, with: $0) }
      try bytes.write(to: url)
      do {
        let store = try CaskStore(path: path, password: "new", options: Self.options)
        try store.close()
        Issue.record("the store opened")
      } catch CaskError.integrityViolation(_, let reason) {
        #expect(reason.contains("key epoch"), "\(reason)")
      }
    }
  }

  @Test("an integrity token taken before a password change is checked until the rotation finishes")
  func tokenAcrossRotation() throws {
    try withStore(options: Self.options, password: "old", label: "epochs-token") { store, path in
      try store.put(Self.value("v"), forKey: "k")
      let before = try store.integrityToken()
      try store.changePassword(to: "new")
      try store.checkFreshness(against: before)
      let after = try store.integrityToken()
      try store.rotateKeys()
      try store.checkFreshness(against: after)
      #expect(throws: CaskError.self) { try store.checkFreshness(against: before) }
    }
  }

  @Test("writers during password changes and rotations lose no write")
  func concurrentWriters() throws {
    var options = Self.options
    options.segmentSizeLimit = 4096
    try withStore(options: options, password: "p0", label: "epochs-concurrent") { store, path in
      let writers = 3
      let perWriter = 300
      let done = DispatchGroup()
      let failures = Locked<[String]>([])
      for writer in 0..<writers {
        done.enter()
        Thread.detachNewThread {
          defer { done.leave() }
          for index in 0..<perWriter {
            do {
              try store.put(Self.value("w\(writer) v\(index)"), forKey: "w\(writer)-\(index % 50)")
              if index % 7 == 0 {
                try store.batch { batch in
                  try batch.put(Self.value("b\(writer) \(index)"), forKey: "b\(writer)-\(index % 5)")
                  try batch.put(Self.value("c\(writer) \(index)"), forKey: "c\(writer)-\(index % 5)")
                }
              }
            } catch {
              failures.withLock { $0.append("\(error)") }
            }
          }
        }
      }
      var password = 0
      while done.wait(timeout: .now()) == .timedOut {
        password += 1
        try store.changePassword(to: "p\(password)")
        if password % 2 == 0 { try store.rotateKeys() }
      }
      #expect(failures.withLock { $0 }.isEmpty)
      #expect(password > 0)
      try store.close()
      let reopened = try CaskStore(path: path, password: "p\(password)", options: options)
      defer { try? reopened.close() }
      for writer in 0..<writers {
        for slot in 0..<50 {
          let last = (0..<perWriter).last { $0 % 50 == slot }!
          #expect(try reopened.get("w\(writer)-\(slot)") == Self.value("w\(writer) v\(last)"))
        }
        for slot in 0..<5 {
          let last = (0..<perWriter).last { $0 % 7 == 0 && $0 % 5 == slot }!
          #expect(try reopened.get("b\(writer)-\(slot)") == Self.value("b\(writer) \(last)"))
          #expect(try reopened.get("c\(writer)-\(slot)") == Self.value("c\(writer) \(last)"))
        }
      }
      #expect(try reopened.verify().isClean)
      try reopened.rotateKeys()
      #expect(reopened.keyEpochs.isRotated)
    }
  }
}

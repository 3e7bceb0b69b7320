import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// Symlinks and other non-files planted in a store directory by someone who can write it (the
/// "someone who can change the files" of Docs/SECURITY.md section 3) must not make the store
/// create, read or write files outside the directory, or hang.
@Suite("Planted symlinks and FIFOs in a store directory are refused, not followed")
struct PlantedFileTests {
  let options = CaskStore.Options(durability: .never, autoCompaction: nil)

  @Test("a LOCK symlink planted in the store directory does not make open create a file elsewhere")
  func lockSymlinkIsNotFollowed() throws {
    try withTemporaryDirectory("planted-lock") { directory throws in
      let path = directory.file("store.cask")
      let store = try CaskStore(path: path, password: "pw", options: options)
      try store.put(Data("v".utf8), forKey: "k")
      try store.close()

      let victim = directory.file("victim-file")
      let lock = path + "/" + CaskFormat.lockFileName
      try FileManager.default.removeItem(atPath: lock)
      try FileManager.default.createSymbolicLink(atPath: lock, withDestinationPath: victim)

      #expect(throws: CaskError.io(operation: "open", path: lock, errno: ELOOP)) {
        try CaskStore(path: path, password: "pw", options: options)
      }
      #expect(!FileManager.default.fileExists(atPath: victim), "opening the store created \(victim) through LOCK")
    }
  }

  @Test("a segment symlink planted in the store directory does not make the store append to a file elsewhere")
  func segmentSymlinkIsNotWrittenThrough() throws {
    try withTemporaryDirectory("planted-segment") { directory throws in
      // The victim: another store of the same user, outside the attacked directory.
      let victimPath = directory.file("victim.cask")
      let victim = try CaskStore(path: victimPath, password: "victim-pw", options: options)
      try victim.put(Data("private".utf8), forKey: "mine")
      try victim.close()
      let victimSegment = victimPath + "/" + Segment.fileName(id: 1)
      let before = try Data(contentsOf: URL(fileURLWithPath: victimSegment))

      // The attacked store: its segments replaced by a symlink to the victim's segment.
      let path = directory.file("attacked.cask")
      let attacked = try CaskStore(path: path, password: "pw", options: options)
      try attacked.put(Data("v".utf8), forKey: "k")
      try attacked.close()
      for name in try FileManager.default.contentsOfDirectory(atPath: path)
      where name.hasSuffix(".seg") || name.hasSuffix(".hint") {
        try FileManager.default.removeItem(atPath: path + "/" + name)
      }
      try FileManager.default.createSymbolicLink(
        atPath: path + "/" + Segment.fileName(id: 1), withDestinationPath: victimSegment)

      let segment = path + "/" + Segment.fileName(id: 1)
      #expect(throws: CaskError.io(operation: "open", path: segment, errno: ELOOP)) {
        try CaskStore(path: path, password: "pw", options: options)
      }
      #expect(throws: CaskError.io(operation: "open", path: segment, errno: ELOOP)) {
        try CaskStore(path: path, password: "pw", options: CaskStore.Options(readOnly: true))
      }
      let after = try Data(contentsOf: URL(fileURLWithPath: victimSegment))
      #expect(after == before, "the other store's segment grew from \(before.count) to \(after.count) bytes")
      let reopened = try CaskStore(path: victimPath, password: "victim-pw", options: options)
      defer { try? reopened.close() }
      #expect(try reopened.verify().isClean, "the victim store now reports damage")
    }
  }

  @Test("a FIFO under a segment's name is refused at open instead of blocking it")
  func fifoIsRefused() throws {
    try withStore(options: options, label: "planted-fifo") { store, path throws in
      try store.put(Data("v".utf8), forKey: "k")
      try store.close()
      let planted = path + "/" + Segment.fileName(id: 7)
      #expect(mkfifo(planted, 0o600) == 0)
      #expect(throws: CaskError.io(operation: "open (not a regular file)", path: planted, errno: EINVAL)) {
        try CaskStore(path: path, password: "pw", options: options)
      }
    }
  }
}

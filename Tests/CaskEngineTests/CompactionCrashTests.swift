import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CaskEngine

@Suite("Crashes inside compaction")
struct CompactionCrashTests {
  @Test("a hint left by a compaction killed before its rename never describes the next segment with that id")
  func orphanHintOfUnfinishedOutput() throws {
    try withTemporaryDirectory("orphan-hint") { directory throws in
      let path = directory.file("store.cask")
      let killedImage = directory.file("killed-in-compaction.cask")
      let value = Data(repeating: 7, count: 100)
      let later = Data(repeating: 8, count: 100)

      // 1. Many overwrites of "a" and one "b" in segment 1; compaction copies the two live records
      //    into output segment 2. The process dies as the output is about to be renamed into place:
      //    its hint is written, the output is still a temporary file.
      let disk = HookedFileSystem(beforeRename: { source in
        guard source.hasSuffix(".seg" + CaskFormat.temporarySuffix) else { return }
        // At most once: the first output's rename.
        guard !FileManager.default.fileExists(atPath: killedImage) else { return }
        try? HookedFileSystem.copyStore(path, to: killedImage)
      })
      let options = CaskStore.Options(durability: .never, autoCompaction: nil, fileSystem: disk)
      let store = try CaskStore(path: path, password: "pw", options: options)
      for _ in 0..<40 { try store.put(value, forKey: "a") }
      try store.put(value, forKey: "b")
      disk.armed.store(true, ordering: .releasing)
      try #require(try store.compact() != nil)
      try store.close()
      // The crash left the output's hint beside its temporary file.
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: killedImage)
      #expect(leftovers.contains(Segment.hintName(id: 2)))
      #expect(leftovers.contains(Segment.fileName(id: 2) + CaskFormat.temporarySuffix))

      // 2. Recovery drops the unfinished output. Segment 1 is full for the new size limit, so the
      //    next write starts a new segment. Were numbers reused, it would be number 2 again, and two
      //    records of the same sizes as the lost output's would make it exactly as long as the
      //    leftover hint says: the hint would then be trusted, pointing "a" and "b" at the records
      //    of "c" and "d" and losing those.
      let small = CaskStore.Options(durability: .never, segmentSizeLimit: 4 << 10, autoCompaction: nil)
      let killedAgain = directory.file("killed-again.cask")
      do {
        let recovered = try CaskStore(path: killedImage, password: "pw", options: small)
        try recovered.put(later, forKey: "c")
        try recovered.put(later, forKey: "d")
        // 3. Killed again before close could write a hint of its own.
        try HookedFileSystem.copyStore(killedImage, to: killedAgain)
        try recovered.close()
      }

      let reopened = try CaskStore(path: killedAgain, password: "pw", options: small)
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.corruptRegions.isEmpty)
      #expect(try reopened.get("c") == later)
      #expect(try reopened.get("d") == later)
      #expect(try reopened.get("a") == value)
      #expect(try reopened.get("b") == value)
      #expect(try reopened.keys() == ["a", "b", "c", "d"])
      #expect(try reopened.verify().isClean)
    }
  }
}

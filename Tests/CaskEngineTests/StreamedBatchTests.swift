import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CaskEngine

/// `CaskStore.streamedBatch`: records appended as they are made, visible only at the commit
/// marker, cut off again when the batch throws, and never applied by an open that finds the
/// batch without its marker (a crash or power loss in the middle).
@Suite("Streamed batches")
struct StreamedBatchTests {
  static let password = "streamed"

  static func value(_ index: Int, length: Int = 700) -> Data {
    var data = Data("value \(index) ".utf8)
    data.append(Data(repeating: UInt8(truncatingIfNeeded: index), count: length))
    return data
  }

  static func segmentBytes(in path: String) throws -> [String: Int] {
    var sizes: [String: Int] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".seg") {
      sizes[name] = try FileDamage.size(of: "\(path)/\(name)")
    }
    return sizes
  }

  @Test("readers on another thread see none of a streamed batch until it commits, then all of it")
  func readersSeeNothingBeforeCommit() throws {
    try withTemporaryDirectory("streamed-readers") { directory in
      let store = try CaskStore(
        path: directory.file("s.cask"), password: Self.password, options: CaskStore.Options(durability: .never))
      defer { try? store.close() }
      for index in 0..<10 { try store.put(Self.value(index), forKey: "old-\(index)") }
      let total = 3_000
      let stop = Atomic(false)
      let partial = Atomic(0)
      let sawAll = Atomic(false)
      let reader = Thread {
        while !stop.load(ordering: .acquiring) {
          // Read in this order: once a key of the batch is seen, the whole batch must be.
          let hasFirst = (try? store.contains("new-0")) ?? false
          let count = store.count
          // Either the batch is wholly invisible or wholly visible: no count in between.
          if (count != 10 && count != 10 + total) || (hasFirst && count != 10 + total) {
            partial.add(1, ordering: .relaxed)
          }
          if count == 10 + total { sawAll.store(true, ordering: .releasing) }
        }
      }
      reader.start()
      try store.streamedBatch { batch in
        for index in 0..<total {
          try batch.put(Self.value(index), forKey: "new-\(index)")
          // Same thread, inside the batch: reads see the committed store only.
          if index == total / 2 { #expect(try store.get("new-0") == nil && store.count == 10) }
        }
      }
      while !sawAll.load(ordering: .acquiring) { usleep(1_000) }
      stop.store(true, ordering: .releasing)
      #expect(partial.load(ordering: .relaxed) == 0, "a reader saw part of the batch")
      #expect(try store.get("new-\(total - 1)") == Self.value(total - 1))
      #expect(store.count == 10 + total)
    }
  }

  @Test("a streamed batch that throws leaves no record on disk and nothing visible; the store goes on")
  func thrownBatchLeavesNothing() throws {
    struct Refused: Error {}
    try withTemporaryDirectory("streamed-abort") { directory in
      let path = directory.file("s.cask")
      let store = try CaskStore(path: path, password: Self.password, options: CaskStore.Options(durability: .always))
      try store.put(Self.value(1), forKey: "kept")
      let before = try Self.segmentBytes(in: path)
      #expect(throws: Refused.self) {
        try store.streamedBatch { batch in
          // Several megabytes: most of it already written when the body throws.
          for index in 0..<6_000 { try batch.put(Self.value(index), forKey: "gone-\(index)") }
          throw Refused()
        }
      }
      // Cut back to the batch's start (the zeros `.always` reserved ahead go with it).
      let after = try Self.segmentBytes(in: path)
      #expect(Set(after.keys) == Set(before.keys) && after.allSatisfy { $0.value <= before[$0.key] ?? 0 })
      #expect(after.values.reduce(0, +) < 1 << 20, "the aborted records were not cut off: \(after)")
      #expect(store.count == 1)
      #expect(try store.get("gone-0") == nil)
      try store.put(Self.value(2), forKey: "after")
      try store.close()
      let reopened = try CaskStore(path: path, password: Self.password)
      defer { try? reopened.close() }
      #expect(reopened.stats().recovery.isClean)
      #expect(try reopened.verify().isClean)
      #expect(try reopened.keys().sorted() == ["after", "kept"])
    }
  }

  @Test("a key written twice in a streamed batch keeps its later value; a delete in it removes a stored key")
  func laterWriteWins() throws {
    try withTemporaryDirectory("streamed-twice") { directory in
      let path = directory.file("s.cask")
      let store = try CaskStore(path: path, password: Self.password)
      try store.put(Data("old".utf8), forKey: "doomed")
      let firstTimes = try store.streamedBatch { batch -> [Bool] in
        [
          try batch.put(Data("one".utf8), forKey: "k"), try batch.put(Data("two".utf8), forKey: "k"),
          try batch.put(Data("x".utf8), forKey: "other"),
        ]
      }
      #expect(firstTimes == [true, false, true])
      try store.streamedBatch { batch in
        try batch.delete("doomed")
        try batch.delete("never-there")
        #expect(try batch.contains("doomed") == false && batch.contains("k"))
      }
      #expect(try store.get("k") == Data("two".utf8))
      #expect(try store.get("doomed") == nil)
      try store.close()
      // From the hint, then from a scan of the segment: the same answer.
      for removeHints in [false, true] {
        if removeHints {
          for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".hint") {
            try FileManager.default.removeItem(atPath: "\(path)/\(name)")
          }
        }
        let reopened = try CaskStore(path: path, password: Self.password)
        #expect(try reopened.get("k") == Data("two".utf8))
        #expect(try reopened.keys().sorted() == ["k", "other"])
        #expect(reopened.stats().recovery.isClean)
        try reopened.close()
      }
    }
  }

  @Test("a streamed batch larger than the segment limit stays in one segment, survives reopen and compaction")
  func batchLargerThanSegmentLimit() throws {
    try withTemporaryDirectory("streamed-roll") { directory in
      let path = directory.file("s.cask")
      let options = CaskStore.Options(durability: .always, segmentSizeLimit: 16 << 10, autoCompaction: nil)
      let store = try CaskStore(path: path, password: Self.password, options: options)
      // Fill the active segment nearly to its limit: the batch must start a new one or use its room.
      for index in 0..<20 { try store.put(Self.value(index), forKey: "before-\(index)") }
      let segmentsBefore = try Self.segmentBytes(in: path).count
      try store.streamedBatch { batch in
        for index in 0..<400 { try batch.put(Self.value(index), forKey: "big-\(index)") }
        // Overwrites of keys written before the batch.
        for index in 0..<5 { try batch.put(Data("new \(index)".utf8), forKey: "before-\(index)") }
      }
      let sizes = try Self.segmentBytes(in: path)
      #expect(sizes.count <= segmentsBefore + 1, "the batch was spread over segments: \(sizes)")
      #expect(sizes.values.max() ?? 0 > 16 << 10, "no segment holds the whole batch: \(sizes)")
      for index in 0..<30 { try store.put(Self.value(index), forKey: "after-\(index)") }
      #expect(try Self.segmentBytes(in: path).count > sizes.count, "writes after the batch did not roll")
      var model: [String: Data] = [:]
      for index in 0..<20 { model["before-\(index)"] = index < 5 ? Data("new \(index)".utf8) : Self.value(index) }
      for index in 0..<400 { model["big-\(index)"] = Self.value(index) }
      for index in 0..<30 { model["after-\(index)"] = Self.value(index) }
      func contents(_ store: CaskStore) throws -> [String: Data] {
        var found: [String: Data] = [:]
        for key in try store.keys() { found[key] = try store.get(key) }
        return found
      }
      #expect(try contents(store) == model)
      try store.close()
      let reopened = try CaskStore(path: path, password: Self.password, options: options)
      #expect(reopened.stats().recovery.isClean)
      #expect(try contents(reopened) == model)
      _ = try reopened.compact()
      #expect(try contents(reopened) == model)
      #expect(try reopened.verify().isClean)
      try reopened.close()
      let afterCompaction = try CaskStore(path: path, password: Self.password, options: options)
      defer { try? afterCompaction.close() }
      #expect(try contents(afterCompaction) == model)
      #expect(afterCompaction.stats().recovery.isClean)
    }
  }

  @Test("power lost during a streamed batch that spans the segment limit: reopen finds none of it or all of it")
  func powerLossDuringStreamedBatch() throws {
    var random = SeededRandom.make(test: "streamed power loss")
    for iteration in 0..<testIterations(8) {
      var fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
      let options = FaultWorkload.options(fileSystem, segmentSizeLimit: 8 << 10)
      var store = try FaultWorkload.open(options)
      var model: [String: Data] = [:]
      for index in 0..<12 {
        try store.put(Self.value(index, length: 300), forKey: "base-\(index)")
        model["base-\(index)"] = Self.value(index, length: 300)
      }
      var after = model
      let total = 2_500
      for index in 0..<total { after["s-\(index)"] = Self.value(index) }
      // The batch writes about 2 MB: a few flushes, the commit's write and its sync.
      fileSystem.scheduleCrash(afterMutations: Int(1 + random.next() % 6))
      var committed = false
      do {
        try store.streamedBatch { batch in
          for index in 0..<total { try batch.put(Self.value(index), forKey: "s-\(index)") }
        }
        committed = true
      } catch {
        #expect(fileSystem.isPoweredOff, "iteration \(iteration): the batch failed without a fault: \(error)")
      }
      fileSystem = fileSystem.crash(using: &random)
      store = try FaultWorkload.open(FaultWorkload.options(fileSystem, segmentSizeLimit: 8 << 10))
      let recovered = try FaultWorkload.contents(of: store)
      let context = "iteration \(iteration) of seed \(random.seed)"
      #expect(recovered == model || recovered == after, "\(context): part of the batch survived")
      if committed { #expect(recovered == after, "\(context): an acknowledged batch was lost") }
      #expect(try store.verify().isClean, "\(context): verify found damage after recovery")
      #expect(store.stats().recovery.corruptRegions.isEmpty, "\(context)")
      // Compaction after the recovery keeps exactly what the recovery found.
      _ = try store.compact()
      #expect(try FaultWorkload.contents(of: store) == recovered, "\(context): compaction changed the contents")
      #expect(try store.verify().isClean, "\(context): verify after compaction")
      try store.close()
    }
  }
}

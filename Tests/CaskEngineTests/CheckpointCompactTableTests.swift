import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A checkpoint holds a table's used slots only and its long keys once, in byte order and
/// prefix-compressed (Docs/FORMAT.md, section 18), and a store opened from it answers exactly
/// as one opened from its hints and log.
@Suite("Checkpoint: tables written compactly")
struct CheckpointCompactTableTests {
  @Test("a checkpoint is smaller than its tables as they lie in memory, and opens to the same keys")
  func smallerThanTheTables() throws {
    try withTemporaryDirectory("checkpoint-compact") { directory in
      let path = directory.file("store")
      var random = SeededRandom.make(test: "checkpoint compact tables")
      let store = try CheckpointFixture.open(path)
      var model: [String: Data] = [:]
      var longKeyBytes = 0
      let count = 3_000
      try store.batch { batch in
        for index in 0..<count {
          // Index-like keys: a long group name shared by all, a text shared by many.
          let text = "text-\(random.next() % 50)"
          let key = index % 4 == 0 ? "k\(index)" : "\u{1}cask.index\u{1}city\u{1}events\u{0}\(text)\u{0}e\(index)"
          let value = Data("v\(index)".utf8)
          try batch.put(value, forKey: key)
          model[key] = value
          if key.utf8.count > KeyTable.inlineLimit { longKeyBytes += key.utf8.count }
        }
      }
      try store.close()
      let size = try #require(
        try FileManager.default.attributesOfItem(atPath: CheckpointFixture.file(path))[.size] as? NSNumber)
      // A table is at most 80% full, so its slots in memory are at least 40 bytes a key.
      let inMemory = count * KeyTable.slotLength * 5 / 4 + longKeyBytes
      #expect(size.intValue < inMemory, "checkpoint of \(size) bytes, tables at least \(inMemory)")

      let reopened = try CheckpointFixture.open(path, readOnly: true)
      #expect(reopened.stats().recovery.segmentsFromCheckpoint == reopened.stats().segments)
      #expect(try CheckpointFixture.contents(of: reopened) == model)
      for key in model.keys.shuffled(using: &random).prefix(200) { #expect(try reopened.get(key) == model[key]) }
      #expect(try reopened.get("\u{1}cask.index\u{1}city\u{1}events\u{0}text-0\u{0}e-missing") == nil)
      try reopened.close()
    }
  }

  @Test("a table whose long keys fill several chunks is written and read back whole")
  func severalChunks() throws {
    var table = KeyTable(hashKey: KeyHashKey(k0: 3, k1: 4))
    var keys: [[UInt8]] = []
    for index in 0..<3_000 {
      let key = Array("\u{1}group-with-a-long-name\u{0}\(String(repeating: "x", count: index % 40))-\(index)".utf8)
      keys.append(key)
      key.withUnsafeBytes { _ = table.updateValue(RecordLocation(segment: 1, offset: 32, length: 0), forKey: $0) }
    }
    let image = CheckpointTableImage(table)
    #expect(image.chunks.count > 1)
    #expect(image.liveBytes == keys.reduce(0) { $0 + $1.count })
    var decoded: [UInt8] = []
    for chunk in image.chunks {
      var bytes = [UInt8](repeating: 0, count: chunk.length)
      let ok = chunk.contents.withUnsafeBytes { contents in
        bytes.withUnsafeMutableBytes {
          CheckpointTableImage.decodeChunk(contents, into: $0.baseAddress!, length: chunk.length)
        }
      }
      #expect(ok)
      #expect(chunk.length <= KeyArena.largestChunkLength)
      decoded += bytes
    }
    // The chunks hold every key once, in byte order.
    let sorted = keys.sorted { SortedKeyOrder.compare($0, $1) < 0 }
    #expect(decoded == Array(sorted.joined()))
  }
}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A record's sequence field is protected by its CRC only, so a damaged or crafted record can
/// claim the largest sequence. Open must not overflow (fuzz-hint found the trap), and appends
/// must fail with `corrupt` instead of wrapping around.
@Suite("A record claiming the largest sequence")
struct SequenceLimitTests {
  @Test("opens and serves reads; every write throws corrupt, and nothing is appended")
  func largestSequence() throws {
    try withTemporaryDirectory("sequence-limit") { directory throws in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      // Version 2: from version 3 on the sequence is sealed in the key message, and a changed
      // one makes the record's batch damage (TamperDetectionTests).
      var options = CaskStore.Options(durability: .never, autoCompaction: nil)
      options.newStoreFormatVersion = 2
      let store = try CaskStore(path: path, keys: keys, options: options)
      try store.put(Data("value".utf8), forKey: "key")
      try store.close()

      // Give the only record the sequence 2^64 - 1, with a matching CRC, and drop the hint so
      // that open reads the record itself.
      let segmentPath = "\(path)/\(Segment.fileName(id: 1))"
      var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segmentPath)))
      let start = FileDamage.recordsStart(ofSegment: bytes)
      for index in 0..<8 { bytes[start + 8 + index] = 0xFF }
      RecordEncoder.setChecksum(in: &bytes, recordAt: start, length: bytes.count - start)
      try Data(bytes).write(to: URL(fileURLWithPath: segmentPath))
      try? FileManager.default.removeItem(atPath: "\(path)/\(Segment.hintName(id: 1))")

      let reopened = try CaskStore(path: path, keys: keys, options: options)
      #expect(reopened.stats().recovery.isClean)
      #expect(try reopened.get("key") == Data("value".utf8))
      let sizeBefore = try FileManager.default.attributesOfItem(atPath: segmentPath)[.size] as? Int
      #expect(throws: CaskError.self) { try reopened.put(Data("more".utf8), forKey: "other") }
      do {
        try reopened.put(Data("more".utf8), forKey: "other")
      } catch CaskError.corrupt(_, _, let reason) {
        #expect(reason.contains("sequence"))
      } catch {
        Issue.record("expected corrupt, got \(error)")
      }
      #expect(throws: CaskError.self) { try reopened.delete("key") }
      #expect(try reopened.get("key") == Data("value".utf8))
      #expect(try reopened.get("other") == nil)
      let sizeAfter = try FileManager.default.attributesOfItem(atPath: segmentPath)[.size] as? Int
      #expect(sizeAfter == sizeBefore)
      try reopened.close()
    }
  }

  @Test("a segment order with no room after it: compact throws corrupt instead of trapping; nothing is lost")
  func largestOrderSub() throws {
    try withTemporaryDirectory("order-limit") { directory throws in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      // Version 2: a header is rewritten under a closed store, which a version 3 manifest reports.
      let options = CaskStore.Options(durability: .never, segmentSizeLimit: 2048, autoCompaction: nil)
        .creatingVersion2
      let store = try CaskStore(path: path, keys: keys, options: options)
      var values: [String: Data] = [:]
      for index in 0..<20 {
        values["key-\(index)"] = Data(repeating: UInt8(index), count: 300)
        try store.put(values["key-\(index)"]!, forKey: "key-\(index)")
      }
      for index in 0..<10 where index % 2 == 0 {
        try store.delete("key-\(index)")
        values["key-\(index)"] = nil
      }
      try store.close()

      // The last segment's header (a file the engine would never write) claims order sub 2^32 - 1,
      // with a matching CRC; compaction numbers its outputs after it.
      let last = try #require(try DamageFixture.segmentNames(in: path).last)
      let segmentPath = "\(path)/\(last)"
      var bytes = try Data(contentsOf: URL(fileURLWithPath: segmentPath))
      let (id, order, _, _) = try Segment.decodeHeader(bytes).get()
      bytes.replaceSubrange(
        0..<CaskFormat.segmentHeaderLength,
        with: Segment.encodeHeader(id: id, order: SegmentOrder(base: order.base, sub: .max), version: 2))
      try bytes.write(to: URL(fileURLWithPath: segmentPath))

      let reopened = try CaskStore(path: path, keys: keys, options: options)
      do {
        try reopened.compact()
        Issue.record("compaction numbered an output past the largest order")
      } catch CaskError.corrupt(let file, _, _) {
        #expect(file == last)
      }
      for (key, value) in values { #expect(try reopened.get(key) == value) }
      #expect(reopened.count == values.count)
      try reopened.put(Data("after".utf8), forKey: "after")
      try reopened.close()
      let again = try CaskStore(path: path, keys: keys, options: options)
      for (key, value) in values { #expect(try again.get(key) == value) }
      #expect(try again.get("after") == Data("after".utf8))
      try again.close()
    }
  }
}

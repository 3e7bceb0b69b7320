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
    let directory = try TemporaryDirectory("sequence-limit")
    defer { directory.remove() }
    let path = directory.file("store.cask")
    let keys = try RNCryptor.Keys.random()
    let options = CaskStore.Options(durability: .never, autoCompaction: nil)
    let store = try CaskStore(path: path, keys: keys, options: options)
    try store.put(Data("value".utf8), forKey: "key")
    try store.close()

    // Give the only record the sequence 2^64 - 1, with a matching CRC, and drop the hint so
    // that open reads the record itself.
    let segmentPath = "\(path)/\(Segment.fileName(id: 1))"
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segmentPath)))
    let start = CaskFormat.segmentHeaderLength
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

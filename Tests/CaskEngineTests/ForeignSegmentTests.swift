import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Segment files the engine never writes: a name in upper case, a header whose order base is
/// beyond the ids, two segments with one order. Prevents: an upper-case name read as a
/// segment but left behind by compaction (which removes inputs by the lower-case name), so a
/// deleted key came back; a stray base that made every later write lose to older records at
/// the next open; ties between orders that followed the directory listing.
@Suite("Segments the engine never writes: upper-case names, stray order bases, equal orders")
struct ForeignSegmentTests {
  // Version 2: headers are rewritten under a closed store, which a version 3 manifest reports.
  private let options = CaskStore.Options(durability: .never, segmentSizeLimit: 64, autoCompaction: nil)
    .creatingVersion2

  private func segments(_ path: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
  }

  /// Rewrites the 32-byte header of a segment file.
  private func setHeader(of file: String, id: UInt32, base: UInt32, sub: UInt32 = 0) throws {
    var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
    bytes.replaceSubrange(
      0..<CaskFormat.segmentHeaderLength,
      with: Segment.encodeHeader(id: id, order: SegmentOrder(base: base, sub: sub), version: 2))
    try bytes.write(to: URL(fileURLWithPath: file))
  }

  @Test("an upper-case segment name is reported and kept, not read, and compaction leaves it and resurrects nothing")
  func upperCaseName() throws {
    try withTemporaryDirectory("foreign-name") { directory throws in
      let path = directory.file("s.cask")
      do {
        // A segment size limit of 64 bytes: every put seals its segment, so ids pass 9.
        let store = try CaskStore(path: path, password: "pw", options: options)
        for index in 0..<12 { try store.put(Data("v\(index)".utf8), forKey: "k\(index)") }
        try store.close()
      }
      let lower = "\(path)/0000000a.seg"
      let upper = "\(path)/0000000A.seg"
      try #require(FileManager.default.fileExists(atPath: lower))
      try FileManager.default.moveItem(atPath: lower, toPath: upper)
      try? FileManager.default.removeItem(atPath: "\(path)/0000000a.hint")
      let store = try CaskStore(path: path, password: "pw", options: options)
      #expect(store.stats().recovery.unreadableSegments == ["0000000A.seg"])
      #expect(try store.get("k9") == nil, "the upper-case file was read")
      #expect(try store.get("k8") == Data("v8".utf8))
      try store.delete("k8")
      _ = try store.compact()
      try store.close()
      #expect(FileManager.default.fileExists(atPath: upper), "compaction removed a file it did not read")
      let reopened = try CaskStore(path: path, password: "pw", options: options)
      defer { try? reopened.close() }
      #expect(try reopened.get("k8") == nil, "a deleted key came back")
      #expect(reopened.stats().recovery.unreadableSegments == ["0000000A.seg"])
      #expect(!(try segments(path)).contains("0000000a.seg"), "a new segment took the number of the foreign file")
    }
  }

  @Test("a segment whose order base is beyond the ids does not make later writes lose at the next open")
  func strayBase() throws {
    try withTemporaryDirectory("stray-base") { directory throws in
      let path = directory.file("s.cask")
      let big = CaskStore.Options(durability: .never, autoCompaction: nil).creatingVersion2
      do {
        let store = try CaskStore(path: path, password: "pw", options: big)
        try store.put(Data("old".utf8), forKey: "k")
        try store.close()
      }
      try setHeader(of: "\(path)/00000001.seg", id: 1, base: 100)
      try? FileManager.default.removeItem(atPath: "\(path)/00000001.hint")
      do {
        // The small limit seals the resumed segment at once: the write goes to a new one.
        let store = try CaskStore(path: path, password: "pw", options: options)
        #expect(try store.get("k") == Data("old".utf8))
        try store.put(Data("new".utf8), forKey: "k")
        try store.close()
      }
      let reopened = try CaskStore(path: path, password: "pw", options: big)
      defer { try? reopened.close() }
      #expect(try reopened.get("k") == Data("new".utf8), "the later write lost to the older record")
    }
  }

  @Test("two segments with the same order: the higher file id is the newer, at every open")
  func equalOrders() throws {
    try withTemporaryDirectory("equal-orders") { directory throws in
      let path = directory.file("s.cask")
      do {
        let store = try CaskStore(path: path, password: "pw", options: options)
        try store.put(Data("first".utf8), forKey: "k")
        try store.put(Data("second".utf8), forKey: "k")
        try store.close()
      }
      #expect(try segments(path).prefix(2) == ["00000001.seg", "00000002.seg"])
      try setHeader(of: "\(path)/00000002.seg", id: 2, base: 1)
      for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".hint") {
        try FileManager.default.removeItem(atPath: "\(path)/\(name)")
      }
      for _ in 0..<3 {
        let store = try CaskStore(path: path, password: "pw", options: CaskStore.Options(readOnly: true))
        #expect(try store.get("k") == Data("second".utf8))
        try store.close()
      }
    }
  }
}

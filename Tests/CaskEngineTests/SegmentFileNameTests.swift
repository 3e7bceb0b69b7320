import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// The names open reads segment and hint numbers from, parsed byte by byte, and the sorted id
/// lists its checks look numbers up in: both against plain models.
@Suite("Segment file names and sorted segment ids")
struct SegmentFileNameTests {
  @Test(
    "only eight lower-case hex digits, a dot and the extension name a segment or a hint",
    arguments: [
      ("0000000a.seg", "seg", UInt32(10)), ("ffffffff.seg", "seg", UInt32.max), ("00000001.hint", "hint", 1),
      ("0000000A.seg", "seg", nil), ("+000000a.seg", "seg", nil), ("000000a.seg", "seg", nil),
      ("00000000a.seg", "seg", nil), ("0000000a.seg.tmp", "seg", nil), ("0000000a.sex", "seg", nil),
      ("0000000a_seg", "seg", nil), ("0000000a.seg", "hint", nil), ("0000000g.seg", "seg", nil),
      ("0000000\u{FF41}.seg", "seg", nil), ("", "seg", nil), (".seg", "seg", nil),
    ] as [(String, String, UInt32?)])
  func parsesExactNames(name: String, ext: String, id: UInt32?) {
    #expect(Segment.id(fromFileName: name, extension: ext) == id)
  }

  @Test("every id's own file names parse back to it, and no other extension does")
  func roundTrip() {
    var random = SeededRandom.make(test: "segment file names")
    for _ in 0..<testIterations(2_000) {
      let id = UInt32.random(in: 0...UInt32.max, using: &random)
      #expect(Segment.id(fromFileName: Segment.fileName(id: id), extension: CaskFormat.segmentExtension) == id)
      #expect(Segment.id(fromFileName: Segment.hintName(id: id), extension: CaskFormat.hintExtension) == id)
      #expect(Segment.id(fromFileName: Segment.hintName(id: id), extension: CaskFormat.segmentExtension) == nil)
    }
  }

  @Test("a sorted id list answers membership as a set does, repeated and missing ids included")
  func sortedIDsMatchASet() {
    var random = SeededRandom.make(test: "sorted segment ids")
    for _ in 0..<testIterations(300) {
      let ids = (0..<Int.random(in: 0...40, using: &random)).map { _ in UInt32.random(in: 0...60, using: &random) }
      let sorted = SortedSegmentIDs(ids)
      let model = Set(ids)
      for probe in UInt32(0)...64 { #expect(sorted.contains(probe) == model.contains(probe)) }
    }
  }
}

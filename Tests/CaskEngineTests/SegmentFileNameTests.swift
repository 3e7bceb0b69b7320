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

  @Test("a foreign name is a name that is no segment's but lower-cases into one, as `lowercased()` decides")
  func foreignNamesMatchLowercasing() {
    var random = SeededRandom.make(test: "foreign segment names")
    let pool: [String] = [
      "0", "9", "a", "f", "A", "F", "g", "G", ".", "s", "S", "e", "E", "h", "H", "I", "n", "N", "t", "T",
      "\u{212A}", "\u{130}", "\u{FF41}",
    ]
    for _ in 0..<testIterations(3_000) {
      let ext = Bool.random(using: &random) ? CaskFormat.segmentExtension : CaskFormat.hintExtension
      let digits = (0..<8).map { _ in pool[Int.random(in: 0..<6, using: &random)] }.joined()
      var name = digits + "." + (Bool.random(using: &random) ? ext.uppercased() : ext)
      if Int.random(in: 0..<3, using: &random) == 0 {
        var characters = Array(name)
        characters[Int.random(in: 0..<characters.count, using: &random)] = Character(
          pool.randomElement(using: &random)!)
        name = String(characters)
      }
      let model =
        Segment.id(fromFileName: name, extension: ext) == nil
        ? Segment.id(fromFileName: name.lowercased(), extension: ext) : nil
      #expect(Segment.id(fromForeignName: name, extension: ext) == model, "\(name)")
    }
    #expect(Segment.id(fromForeignName: "0000000A.SEG", extension: CaskFormat.segmentExtension) == 10)
    #expect(Segment.id(fromForeignName: "0000000a.seg", extension: CaskFormat.segmentExtension) == nil)
  }
}

import CaskTestSupport
import Foundation
import Testing

@testable import CipherCask

/// What a walk of a sort index tests each id with, against plain models: the set of a
/// driver's ids (`IDSet`), an id's texts tested as bytes (`IndexEntries.hasText`), a
/// condition's bounds as bytes (`TextBounds`), and the walk that keeps only members
/// (`IndexEntries.memberIDs`).
@Suite("Tests of the ids a sort index's walk passes, against models")
struct SortWalkTestTests {
  /// Ids that trip a byte-level hash or comparison: empty, under 8 bytes, 8 to 16 (two loads),
  /// longer, multi-byte UTF-8, U+0000 inside and at the end, and ids that are prefixes of others.
  private static let awkwardIDs = [
    "", "a", "ab", "a\u{0}", "a\u{0}b", "é", "日本語", "e0000001", "e0000001x", "e000000", "1234567890123456",
    "12345678901234567", String(repeating: "z", count: 40), String(repeating: "z", count: 41), "\u{0}",
  ]

  private static func randomID(_ random: inout SeededRandom) -> String {
    if Bool.random(using: &random) { return awkwardIDs.randomElement(using: &random)! }
    let alphabet = Array("ab\u{0}é9")
    return String((0..<Int.random(in: 0...20, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
  }

  @Test("a set of ids grown from no capacity answers as a Set, awkward ids and duplicates included")
  func idSetAgainstSet() {
    var random = SeededRandom.make(test: "SortWalkTestTests.idSetAgainstSet")
    for _ in 0..<testIterations(20) {
      var set = IDSet(capacity: Int.random(in: 0...8, using: &random))
      var model = Set<[UInt8]>()
      for _ in 0..<Int.random(in: 0...600, using: &random) {
        let id = Array(Self.randomID(&random).utf8)
        id.withUnsafeBytes { set.insert($0) }
        model.insert(id)
      }
      #expect(set.count == model.count)
      #expect(set.shortIDCount == model.filter { $0.count < 8 }.count)
      // The test by an entry's last eight bytes never turns a member of eight bytes or more away.
      for id in model where id.count >= 8 {
        let last = id.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: id.count - 8, as: UInt64.self) }
        #expect(set.mayHoldID(endingWith: last), "id \(id)")
      }
      let others = (0..<200).map { _ in Array(Self.randomID(&random).utf8) }
      for id in Self.awkwardIDs.map({ Array($0.utf8) }) + Array(model) + others {
        #expect(id.withUnsafeBytes { set.contains($0) } == model.contains(id), "id \(id)")
      }
    }
  }

  @Test("a text tested as bytes is accepted exactly when the condition accepts it as a String")
  func textBoundsAgainstPredicate() {
    var random = SeededRandom.make(test: "SortWalkTestTests.textBoundsAgainstPredicate")
    let texts = ["", "a", "ab", "abc", "b", "é", "日本", "a\u{1}", "zz", "0001", "0010"]
    for _ in 0..<testIterations(2_000) {
      let lower = Bool.random(using: &random) ? texts.randomElement(using: &random) : nil
      let upper = Bool.random(using: &random) ? texts.randomElement(using: &random) : nil
      let predicate = QueryPredicate<String>(
        keyPath: \String.count, kind: .range, lower: lower, lowerInclusive: Bool.random(using: &random), upper: upper,
        upperInclusive: Bool.random(using: &random)
      ) { [$0] }
      let text = texts.randomElement(using: &random)!
      var bytes = Array(text.utf8)
      let byBytes = bytes.withUnsafeMutableBytes { predicate.textBounds.accepts(UnsafeRawBufferPointer($0)) }
      #expect(byBytes == predicate.accepts([text]), "\(text) in \(lower ?? "-")...\(upper ?? "-")")
    }
  }

  @Test("an id's texts tested as bytes and the walk that keeps members agree with texts(of:) and a filtered walk")
  func memberWalkAgainstModel() {
    var random = SeededRandom.make(test: "SortWalkTestTests.memberWalkAgainstModel")
    // Texts shorter and longer than the eight bytes an entry's separator is looked for in at
    // a time, and of exactly eight and sixteen.
    let texts = ["", "a", "b", "é", "0001", "0002", "zz", "8 bytes!", "0123456789abcdef", "a text of 19 bytes."]
    for _ in 0..<testIterations(10) {
      // Enough entries to span several chunks, so that a walk crosses their ends both ways.
      var entries = IndexEntries()
      let ids = Set((0..<Int.random(in: 1...700, using: &random)).map { _ in Self.randomID(&random) })
      for id in ids {
        for text in texts where Int.random(in: 0..<4, using: &random) == 0 {
          entries.insert(entry: text + "\u{0}" + id)
        }
      }
      for id in ids {
        let own = entries.texts(of: id)
        for text in texts {
          let found = withUTF8Bytes(id) { id in
            entries.hasText(ofID: id) { $0.elementsEqual(text.utf8) }
          }
          #expect(found == own.contains(text), "id \(Array(id.utf8)), text \(text)")
        }
      }
      var members = IDSet(capacity: 0)
      var memberModel = Set<String>()
      // Members of eight bytes or more only, half the time: the walk then tests entries by
      // their last eight bytes first, among entries whose ids are shorter.
      let longOnly = Bool.random(using: &random)
      for id in ids where Bool.random(using: &random) && (!longOnly || id.utf8.count >= 8) {
        withUTF8Bytes(id) { members.insert($0) }
        memberModel.insert(id)
      }
      #expect(!longOnly || members.shortIDCount == 0)
      let lower = texts.randomElement(using: &random)!
      let bounds: EntryBounds =
        Bool.random(using: &random)
        ? .equal(lower) : .range(lower: lower, lowerInclusive: true, upper: nil, upperInclusive: true)
      for descending in [false, true] {
        var expected: [String] = []
        entries.ids(in: bounds, descending: descending) { id in
          if memberModel.contains(String(id)) { expected.append(String(id)) }
          return true
        }
        for skipping in [0, 1, expected.count / 2, expected.count, expected.count + 1] {
          for limit in [1, 3, Int.max] {
            var found: [String] = []
            entries.memberIDs(in: bounds, descending: descending, members: members, skipping: skipping) { text, id in
              let id = String(decoding: id, as: UTF8.self)
              // The text handed over beside an id is that of the entry walked.
              #expect(entries.texts(of: id).contains(String(decoding: text, as: UTF8.self)), "id \(Array(id.utf8))")
              found.append(id)
              return found.count < limit
            }
            #expect(
              found == Array(expected.dropFirst(skipping).prefix(limit)),
              "descending \(descending), skipping \(skipping), limit \(limit)")
          }
        }
      }
    }
  }
}

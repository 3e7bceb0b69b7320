import CaskTestSupport
import Foundation
import Testing

@testable import CipherCask

/// The in-memory entries of an index (`IndexEntries`: packed entries in key order and by id),
/// against a plain set of (text, id) pairs.
@Suite("Index entries in memory against a model")
struct IndexEntriesTests {
  /// Texts and ids that trip a packed layout: empty, multi-byte UTF-8, an id that is a
  /// prefix of another, an id holding U+0000 (as an id may), a text that is a prefix of another.
  private static let texts = ["", "a", "ab", "Évora", "日本", "b\u{1}c", "zz"]
  private static let ids = ["1", "10", "a", "a\u{0}b", "ab", "é", "日本語", "", "x\u{0}"]

  private struct Pair: Hashable {
    var text: String
    var id: String
    var entry: String { text + "\u{0}" + id }
  }

  private func byBytes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

  private func check(_ entries: IndexEntries, against model: Set<Pair>, ids: [String], texts: [String]) {
    #expect(entries.count == model.count)
    for id in ids {
      let expected = model.filter { $0.id == id }.map(\.text).sorted(by: byBytes)
      #expect(entries.texts(of: id).sorted(by: byBytes) == expected, "texts of \(Array(id.utf8))")
      #expect(entries.firstText(of: id).map(String.init) == expected.first, "first text of \(Array(id.utf8))")
    }
    for text in texts {
      let expected = model.filter { $0.text == text }.map(\.id).sorted(by: byBytes)
      var found: [String] = []
      entries.ids(in: .equal(text)) { id in
        found.append(String(id))
        return true
      }
      #expect(found == expected, "ids of \(Array(text.utf8))")
      #expect(entries.count(in: .equal(text)) == expected.count)
      // Skips are counted by rank (the chunks' counts), not walked.
      for skip in [1, expected.count / 2, expected.count] {
        var after: [String] = []
        entries.ids(in: .equal(text), skipping: skip) { id in
          after.append(String(id))
          return true
        }
        #expect(after == Array(expected.dropFirst(skip)), "ids of \(Array(text.utf8)) after \(skip)")
        var before: [String] = []
        entries.ids(in: .equal(text), descending: true, skipping: skip) { id in
          before.append(String(id))
          return true
        }
        #expect(before == Array(expected.reversed().dropFirst(skip)), "ids of \(Array(text.utf8)) down after \(skip)")
      }
    }
    let ordered = model.map(\.entry).sorted(by: byBytes)
    var walked: [String] = []
    entries.forEachEntry { text, id in walked.append(text + "\u{0}" + id) }
    #expect(walked == ordered)
    var byID: [String: [String]] = [:]
    entries.forEachID { id, texts in
      #expect(byID[id] == nil, "id \(Array(id.utf8)) given twice")
      byID[id] = texts.map(String.init).sorted(by: byBytes)
    }
    #expect(byID == Dictionary(grouping: model, by: \.id).mapValues { $0.map(\.text).sorted(by: byBytes) })
    #expect(entries.sameEntries(as: IndexEntries(entries: model.map(\.entry))))
  }

  @Test("inserts and removals keep both orders equal to a set of (text, id) pairs")
  func randomInsertsAndRemovals() {
    var random = SeededRandom.make(test: "IndexEntriesTests.randomInsertsAndRemovals")
    var entries = IndexEntries()
    var model = Set<Pair>()
    // Enough distinct pairs to split chunks of `SortedEntries.maximumChunk` entries and to empty some again.
    let ids = Self.ids + (0..<400).map { "id\($0)" }
    for step in 0..<testIterations(6_000) {
      let pair = Pair(text: Self.texts.randomElement(using: &random)!, id: ids.randomElement(using: &random)!)
      if Int.random(in: 0..<3, using: &random) == 0 {
        entries.remove(entry: pair.entry)
        model.remove(pair)
      } else {
        entries.insert(entry: pair.entry)
        model.insert(pair)
      }
      if step % 1_500 == 0 { check(entries, against: model, ids: ids, texts: Self.texts) }
    }
    check(entries, against: model, ids: ids, texts: Self.texts)
    #expect(model.count > SortedEntries.maximumChunk)
  }

  @Test("removing an entry that shares its text with other ids keeps theirs")
  func removalOfSharedText() {
    var entries = IndexEntries(entries: ["Lisbon\u{0}1", "Lisbon\u{0}2", "Porto\u{0}1", "Lisbon\u{0}3"])
    entries.remove(entry: "Lisbon\u{0}2")
    #expect(entries.texts(of: "2").isEmpty)
    #expect(entries.texts(of: "1").sorted() == ["Lisbon", "Porto"])
    #expect(entries.texts(of: "3") == ["Lisbon"])
    #expect(entries.count(in: .equal("Lisbon")) == 2)
    entries.remove(entry: "Lisbon\u{0}1")
    #expect(entries.texts(of: "1") == ["Porto"])
    entries.remove(entry: "absent\u{0}1")
    #expect(entries.count == 2)
  }

  @Test("an id that is a prefix of another, or holds U+0000, gets only its own texts")
  func idsThatPrefixOthers() {
    let entries = IndexEntries(entries: ["x\u{0}a", "y\u{0}a\u{0}b", "z\u{0}ab", "w\u{0}"])
    #expect(entries.texts(of: "a") == ["x"])
    #expect(entries.texts(of: "a\u{0}b") == ["y"])
    #expect(entries.texts(of: "ab") == ["z"])
    #expect(entries.texts(of: "") == ["w"])
    var found: [String] = []
    entries.ids(in: .equal("y")) { id in
      found.append(String(id))
      return true
    }
    #expect(found == ["a\u{0}b"])
  }

  @Test("entries longer than a chunk's byte budget stay in order across splits")
  func longEntries() {
    var entries = IndexEntries()
    var model = Set<Pair>()
    var random = SeededRandom.make(test: "IndexEntriesTests.longEntries")
    for index in 0..<40 {
      let text = String(repeating: "é", count: Int.random(in: 1...9_000, using: &random)) + "\(index % 7)"
      let pair = Pair(text: text, id: "id\(index)")
      entries.insert(entry: pair.entry)
      model.insert(pair)
    }
    check(entries, against: model, ids: model.map(\.id), texts: model.map(\.text))
    #expect(entries.sameEntries(as: IndexEntries(entries: model.map(\.entry))))
  }

  @Test("entries built at once and entries inserted one by one are the same")
  func builtEqualsInserted() {
    var random = SeededRandom.make(test: "IndexEntriesTests.builtEqualsInserted")
    var model = Set<Pair>()
    for _ in 0..<testIterations(3_000) {
      model.insert(
        Pair(text: Self.texts.randomElement(using: &random)!, id: "\(Int.random(in: 0..<2_000, using: &random))é"))
    }
    var inserted = IndexEntries()
    for pair in model.shuffled(using: &random) { inserted.insert(entry: pair.entry) }
    let built = IndexEntries(entries: model.map(\.entry))
    #expect(built.sameEntries(as: inserted))
    inserted.remove(entry: model.first!.entry)
    #expect(!built.sameEntries(as: inserted))
  }
}

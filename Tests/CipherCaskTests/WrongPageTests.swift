import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `all`, `filter`, `first(where:)` and `fetch(where:sortedBy:limit:offset:)` must return exactly
/// the matching objects, in the order asked, and the page asked: no object dropped or repeated at
/// the edges of a page.
@Suite("Queries return exactly the asked objects and page")
struct WrongPageTests {
  struct Item: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var value: Int
  }

  /// Twelve counters with ids 0..<12 and values that are not in id order.
  private static let counters = (0..<12).map { Counter(id: $0, value: ($0 * 7) % 12, label: $0 % 3 == 0 ? "x" : "y") }

  @Test("all() returns every object of the collection once, and none of another collection")
  func allReturnsEveryObject() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      let others = store.collection(Counter.self, named: "others")
      #expect(try counters.all().isEmpty)
      try counters.save(contentsOf: Self.counters)
      try others.save(Counter(id: 100, value: 1))
      let all = try counters.all()
      #expect(all.count == Self.counters.count)
      #expect(Set(all) == Set(Self.counters))
    }
  }

  @Test("filter returns exactly the matches, and a throwing predicate's error")
  func filterReturnsExactlyTheMatches() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      try counters.save(contentsOf: Self.counters)
      let matches = try counters.filter { $0.value > 5 }
      #expect(Set(matches) == Set(Self.counters.filter { $0.value > 5 }))
      #expect(try counters.filter { _ in false }.isEmpty)
      struct Refused: Error {}
      #expect(throws: Refused.self) { try counters.filter { _ in throw Refused() } }
    }
  }

  @Test("first(where:) returns the first match in id order and stops there; nil for no match")
  func firstStopsAtFirstMatch() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      var asked: [String] = []
      let first = try events.first { event in
        asked.append(event.id)
        return event.city == "Amsterdam" && event.venue == "Hall B"
      }
      #expect(first?.id == "a3")
      #expect(asked == ["a1", "a2", "a3"])
      #expect(try events.first { $0.city == "Paris" } == nil)
      #expect(try store.collection(Event.self, named: "empty").first { _ in true } == nil)
    }
  }

  @Test("fetch pages match a reference slice for every offset and limit, including the edges")
  func fetchPagesMatchReference() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      try counters.save(contentsOf: Self.counters)
      let byValue: @Sendable (Counter, Counter) -> Bool = { ($0.value, $0.id) < ($1.value, $1.id) }
      let sorted = Self.counters.sorted(by: byValue)
      let n = sorted.count
      for offset in [-3, -1, 0, 1, 5, n - 1, n, n + 1, 100] {
        for limit in [nil, -1, 0, 1, 3, n - 1, n, n + 1] as [Int?] {
          let page = try counters.fetch(sortedBy: byValue, limit: limit, offset: offset)
          let start = min(max(0, offset), n)
          let end = limit.map { min(n, start + max(0, $0)) } ?? n
          #expect(page == Array(sorted[start..<end]), "offset \(offset), limit \(String(describing: limit))")
        }
      }
    }
  }

  @Test("ids(), first(where:) and fetch without sortedBy list Int ids by number (2 before 10), not as text")
  func intIdsComeInNumericOrder() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      let ids = [10, 2, -3, 1, 100, 20, 0]
      try counters.save(contentsOf: ids.map { Counter(id: $0, value: $0 == 20 || $0 == 100 ? 1 : 0) })
      #expect(try counters.ids() == [-3, 0, 1, 2, 10, 20, 100])
      #expect(try counters.fetch().map(\.id) == [-3, 0, 1, 2, 10, 20, 100])
      #expect(try counters.fetch(limit: 3, offset: 2).map(\.id) == [1, 2, 10])
      #expect(try counters.fetch(where: { $0.value == 1 }).map(\.id) == [20, 100])
      #expect(try counters.first { $0.value == 1 }?.id == 20)
    }
  }

  @Test("the async ids() lists Int ids by number too")
  func asyncIdsComeInNumericOrder() async throws {
    try await withStore { store in
      let counters = store.collection(Counter.self)
      try await counters.save(contentsOf: [9, 11, 100, 1].map { Counter(id: $0, value: 0) })
      #expect(try await counters.ids() == [1, 9, 11, 100])
    }
  }

  @Test("ids of a type that is not Comparable are listed by their text, byte by byte")
  func nonComparableIdsComeInTextOrder() throws {
    try withStore { store throws in
      let parcels = store.collection(Parcel.self)
      let codes = ["b2", "a10", "a9", "B1", "a1"]
      try parcels.save(contentsOf: codes.map { Parcel(id: Parcel.Code($0)!) })
      let expected = ["B1", "a1", "a10", "a9", "b2"]
      #expect(try parcels.ids().map(\.description) == expected)
      #expect(try parcels.fetch().map(\.id.description) == expected)
    }
  }

  @Test("fetch combines predicate, order and page")
  func fetchCombinesPredicateOrderAndPage() throws {
    try withStore { store throws in
      let events = store.collection(Event.self)
      try events.save(contentsOf: sampleEvents())
      let latest = try events.fetch(where: { $0.venue == "Hall A" }, sortedBy: { $0.date > $1.date }, limit: 1)
      #expect(latest.map(\.id) == ["a4"])
      let second = try events.fetch(
        where: { $0.venue == "Hall A" }, sortedBy: { $0.date > $1.date }, limit: 5, offset: 1)
      #expect(second.map(\.id) == ["a1"])
      #expect(try events.fetch(where: { $0.city == "Paris" }, limit: 3).isEmpty)
    }
  }

  @Test("fetch without sortedBy lists ids that compare equal in the same order as ids(), whatever the write order")
  func fetchTiesFollowIDs() throws {
    try withStore { store throws in
      let items = store.collection(Item.self)
      let composed = "\u{E9}"  // é, one code point
      let decomposed = "e\u{301}"  // e + combining acute: == composed in Swift, another key
      try items.save(Item(id: composed, value: 1))
      try items.save(Item(id: decomposed, value: 2))
      let ids = try items.ids()
      #expect(ids.count == 2)
      let fetched = try items.fetch().map(\.id)
      #expect(fetched.map { Array($0.utf8) } == ids.map { Array($0.utf8) }, "fetch and ids() disagree")
      #expect(try items.first { _ in true }?.value == items.fetch(limit: 1).first?.value)

      // Paging: re-saving one object (no id added or removed) must not move it to the other page.
      let page1 = try items.fetch(limit: 1, offset: 0).map(\.value)
      if let first = try items.fetch(limit: 1, offset: 0).first { try items.save(first) }
      let page2 = try items.fetch(limit: 1, offset: 1).map(\.value)
      #expect(Set(page1 + page2) == [1, 2], "pages \(page1) and \(page2)")
    }
  }

  @Test("fetch sorted by a field with ties pages the same objects after an unrelated re-save")
  func sortedTiesPageConsistently() throws {
    try withStore { store throws in
      let items = store.collection(Item.self)
      // Every object has the same value: the sort decides nothing, ids do not come into it.
      try items.save(contentsOf: (0..<6).map { Item(id: "i\($0)", value: 7) })
      let byValue: (Item, Item) -> Bool = { $0.value < $1.value }
      let first = try items.fetch(sortedBy: byValue, limit: 3, offset: 0).map(\.id)
      // Rewrite one object of the first page, unchanged: no id added, removed or changed.
      try items.save(Item(id: first[0], value: 7))
      let second = try items.fetch(sortedBy: byValue, limit: 3, offset: 3).map(\.id)
      #expect(Set(first + second).count == 6, "pages \(first) and \(second)")
    }
  }

  @Test("fetch with a huge limit and a non-zero offset pages instead of trapping on overflow")
  func hugeLimitWithOffsetDoesNotTrap() throws {
    try withStore { store throws in
      let counters = store.collection(Counter.self)
      try counters.save(contentsOf: (0..<5).map { Counter(id: $0, value: $0) })
      // `limit: .max` reads as "no limit"; start + limit overflowed Int and trapped.
      #expect(try counters.fetch(limit: .max, offset: 2).map(\.id) == [2, 3, 4])
      #expect(try counters.fetch(sortedBy: { $0.id > $1.id }, limit: .max, offset: 1).map(\.id) == [3, 2, 1, 0])
    }
  }
}

/// An object whose id is `LosslessStringConvertible` but not `Comparable`.
private struct Parcel: Codable, Identifiable, Sendable {
  struct Code: LosslessStringConvertible, Hashable, Codable, Sendable {
    let text: String
    init?(_ description: String) { text = description }
    var description: String { text }
  }

  var id: Code
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

@Suite("Composite indexes")
struct CompositeIndexTests {
  private func day(_ n: Double) -> Date { Date(timeIntervalSinceReferenceDate: n * 86_400) }

  @Test("a page of one city by date walks the composite index, in order, from any offset")
  func pageInOrder() throws {
    try withIndexStore { store, _ in
      let gigs = store.collection(
        Gig.self, named: "gigs", indexes: [.index("city", \.city), .index("cityDate", \.city, \.date)])
      for n in 0..<40 { try gigs.save(.make("g\(n)", city: n % 2 == 0 ? "Lisbon" : "Porto", day: Double(n % 7))) }
      let query = gigs.query().where(\.city, equals: "Lisbon").sorted(by: \.date, ascending: false).offset(3).limit(5)
      #expect(try query.explain() == "index 'cityDate' (range); order from index 'cityDate'")
      // Newest first; objects of one day in descending order of their ids' bytes.
      let ascending = (0..<40).filter { $0 % 2 == 0 }.map { (id: "g\($0)", day: $0 % 7) }
        .sorted { $0.day != $1.day ? $0.day < $1.day : $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
      #expect(try query.ids() == ascending.reversed().dropFirst(3).prefix(5).map(\.id))
      #expect(try query.fetch().allSatisfy { $0.city == "Lisbon" })
    }
  }

  @Test("a string holding U+0000 or U+0001 in the first field does not reach into another's entries")
  func escapedFirstField() throws {
    try withIndexStore { store, _ in
      let gigs = store.collection(Gig.self, named: "gigs", indexes: [.index("citySeats", \.city, \.seats)])
      let cities = ["a", "a\u{0}", "a\u{1}", "a\u{1}b", "ab", ""]
      for (n, city) in cities.enumerated() {
        for seats in [-1, 0, 5] { try gigs.save(.make("\(n)-\(seats)", city: city, seats: seats)) }
      }
      for (n, city) in cities.enumerated() {
        let all = try gigs.query().where(\.city, equals: city).sorted(by: \.seats).ids()
        #expect(all == ["\(n)--1", "\(n)-0", "\(n)-5"])
        #expect(try gigs.query().where(\.city, equals: city).where(\.seats, in: 0...).ids() == ["\(n)-0", "\(n)-5"])
        #expect(try gigs.query().where(\.city, equals: city).where(\.seats, equals: 5).count() == 1)
      }
    }
  }

  @Test("a changed composite definition is rebuilt, its old entries removed, and verified")
  func changedDefinition() throws {
    try withIndexStore { store, _ in
      let first = store.collection(Gig.self, named: "gigs", indexes: [.index("pair", \.city, \.date)])
      for n in 0..<8 { try first.save(.make("g\(n)", city: "C\(n % 2)", day: Double(n), seats: n)) }
      let groupsBefore = store.groups().count
      let second = store.collection(Gig.self, named: "gigs", indexes: [.index("pair", \.city, \.seats)])
      #expect(try second.readyIndexes().isEmpty)
      #expect(try second.buildIndexes() == ["pair"])
      let query = second.query().where(\.city, equals: "C0").where(\.seats, in: 2...4)
      #expect(try query.explain() == "index 'pair' (range)")
      #expect(try query.ids() == ["g2", "g4"])
      #expect(store.groups().count == groupsBefore)
      #expect(try second.verifyIndexes().isConsistent)
      #expect(try store.checkIndexEntries().allSatisfy(\.isClean))
    }
  }

  @Test("a composite index declared over stored objects is built from them and then used")
  func builtOverStoredObjects() throws {
    try withIndexStore { store, _ in
      let plain = store.collection(Gig.self, named: "gigs", indexes: [.index("city", \.city)])
      for n in 0..<12 { try plain.save(.make("g\(n)", city: n < 6 ? "A" : "B", day: Double(12 - n))) }
      let gigs = store.collection(
        Gig.self, named: "gigs", indexes: [.index("city", \.city), .index("cityDate", \.city, \.date)])
      let query = gigs.query().where(\.city, equals: "B").sorted(by: \.date).limit(2)
      #expect(try query.ids() == ["g11", "g10"])
      #expect(try query.explain() == "index 'cityDate' (range); order from index 'cityDate'")
      #expect(try gigs.readyIndexes() == ["city", "cityDate"])
    }
  }
}

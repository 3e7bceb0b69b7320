import CaskTestSupport
import CipherCask
import Foundation
import Synchronization
import Testing

/// JSON, counting the objects it decodes.
final class CountingCoder: CaskCoder {
  let decodes = Atomic<Int>(0)
  func encode<T: Encodable>(_ value: T) throws -> Data { try JSONCaskCoder().encode(value) }
  func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    decodes.add(1, ordering: .relaxed)
    return try JSONCaskCoder().decode(type, from: data)
  }
}

@Suite("Queries")
struct QueryTests {
  private func seeded(_ store: CaskStore, coder: any CaskCoder = JSONCaskCoder()) throws -> CaskCollection<Gig> {
    let gigs = store.collection(
      Gig.self, named: "gigs", coder: coder,
      indexes: [
        .index("city", \.city), .index("date", \.date), .index("seats", \.seats), .index("rank", \.rank),
        .index("attendee", each: \.attendees), .index("price", \.price),
      ])
    var batch: [Gig] = []
    for n in 0..<40 {
      var gig = Gig.make(
        "g\(String(format: "%02d", n))", city: ["Lisbon", "Porto", "Faro"][n % 3], day: Double(40 - n), seats: n - 10)
      gig.attendees = n % 4 == 0 ? ["p1", "p2"] : ["p\(n % 7)"]
      batch.append(gig)
    }
    try gigs.save(contentsOf: batch)
    return gigs
  }

  @Test("equality, ranges (closed, half-open, one-sided) and contains return the matching objects")
  func predicateKinds() throws {
    try withIndexStore { store, _ in
      let gigs = try seeded(store)
      let all = try gigs.all()
      func expected(_ predicate: (Gig) -> Bool) -> [String] { all.filter(predicate).map(\.id).sorted() }
      #expect(try gigs.query().where(\.city, equals: "Porto").ids() == expected { $0.city == "Porto" })
      #expect(try gigs.query().where(\.seats, in: -3...4).ids() == expected { (-3...4).contains($0.seats) })
      #expect(try gigs.query().where(\.seats, in: -3..<4).ids() == expected { (-3..<4).contains($0.seats) })
      #expect(try gigs.query().where(\.seats, in: 25...).ids() == expected { $0.seats >= 25 })
      #expect(try gigs.query().where(\.seats, in: ...(-8)).ids() == expected { $0.seats <= -8 })
      #expect(try gigs.query().where(\.seats, in: ..<(-8)).ids() == expected { $0.seats < -8 })
      #expect(try gigs.query().where(\.price, in: -1.0...1.0).ids() == expected { (-1.0...1.0).contains($0.price) })
      #expect(try gigs.query().where(\.attendees, contains: "p2").ids() == expected { $0.attendees.contains("p2") })
      #expect(try gigs.query().where(\.rank, equals: nil).ids() == expected { $0.rank == nil })
      #expect(
        try gigs.query().where(\.rank, in: 1...9).ids() == expected { ($0.rank ?? -100) >= 1 && ($0.rank ?? 100) <= 9 })
      let and = try gigs.query().where(\.city, equals: "Lisbon").where(\.seats, in: 0...20).ids()
      #expect(and == expected { $0.city == "Lisbon" && (0...20).contains($0.seats) })
      #expect(try gigs.query().where(\.city, equals: "Nowhere").fetch().isEmpty)
    }
  }

  @Test("sorted pages with limit and offset match a sort of every object by the field, then the id")
  func sortedPages() throws {
    try withIndexStore { store, _ in
      let gigs = try seeded(store)
      let lisbon = try gigs.all().filter { $0.city == "Lisbon" }.sorted { ($0.date, $0.id) > ($1.date, $1.id) }
      for offset in [0, 3, 13, 20] {
        let page = try gigs.query().where(\.city, equals: "Lisbon").sorted(by: \.date, ascending: false)
          .limit(4).offset(offset).fetch()
        #expect(page.map(\.id) == Array(lisbon.dropFirst(offset).prefix(4)).map(\.id))
      }
      let bySeats = try gigs.query().sorted(by: \.seats).limit(3).ids()
      #expect(bySeats == ["g00", "g01", "g02"])
      #expect(try gigs.query().sorted(by: \.seats, ascending: false).first()?.id == "g39")
    }
  }

  @Test("conditions and orders on fields without an index answer the same, by scanning")
  func unindexedFieldsScan() throws {
    try withIndexStore { store, _ in
      let gigs = try seeded(store)
      let sold = try gigs.all().filter(\.sold).sorted { ($0.seats, $0.id) > ($1.seats, $1.id) }.map(\.id)
      let scanning = gigs.query().where(\.sold, equals: true).sorted(by: \.seats, ascending: false)
      #expect(try scanning.ids() == sold)
      #expect(try scanning.explain().contains("without an index"))
      let soldCount = try gigs.all().filter(\.sold).count
      #expect(try gigs.query().where(\.sold, equals: true).count() == soldCount)
      #expect(try gigs.query().where(\.city, equals: "Faro").sorted(by: \.sold).explain().contains("in memory"))
    }
  }

  @Test("explain names the index a query uses")
  func explainNamesTheIndex() throws {
    try withIndexStore { store, _ in
      let gigs = try seeded(store)
      #expect(try gigs.query().where(\.city, equals: "Faro").explain().contains("index 'city'"))
      #expect(try gigs.query().sorted(by: \.date).limit(3).explain().contains("order from index 'date'"))
      #expect(try gigs.query().where(\.attendees, contains: "p1").explain().contains("index 'attendee'"))
      #expect(try gigs.query().filter { $0.seats > 3 }.explain().contains("scan of every object"))
    }
  }

  @Test("count() and ids() of indexed conditions decode no object; fetch decodes only its page")
  func indexedCountsTouchNoObject() throws {
    try withIndexStore { store, _ in
      let coder = CountingCoder()
      let gigs = try seeded(store, coder: coder)
      _ = try gigs.query().where(\.city, equals: "Porto").count()  // builds what the queries need
      let before = coder.decodes.load(ordering: .relaxed)
      #expect(try gigs.query().where(\.city, equals: "Porto").count() == 13)
      #expect(try gigs.query().where(\.city, equals: "Porto").where(\.seats, in: 0...100).ids().count == 10)
      #expect(try gigs.query().where(\.attendees, contains: "p1").count() > 0)
      #expect(try gigs.query().sorted(by: \.date, ascending: false).limit(5).ids().count == 5)
      #expect(coder.decodes.load(ordering: .relaxed) == before)
      _ = try gigs.query().where(\.city, equals: "Porto").sorted(by: \.date).limit(2).fetch()
      #expect(coder.decodes.load(ordering: .relaxed) == before + 2)
    }
  }

  @Test("filter runs after the indexed part, before the page")
  func filterThenPage() throws {
    try withIndexStore { store, _ in
      let gigs = try seeded(store)
      let expected = try gigs.all().filter { $0.city == "Lisbon" && $0.seats % 2 == 0 }
        .sorted { ($0.date, $0.id) < ($1.date, $1.id) }.dropFirst(1).prefix(2).map(\.id)
      let page = try gigs.query().where(\.city, equals: "Lisbon").filter { $0.seats % 2 == 0 }
        .sorted(by: \.date).offset(1).limit(2).fetch()
      #expect(page.map(\.id) == Array(expected))
      #expect(try gigs.query().where(\.city, equals: "Lisbon").filter { $0.seats % 2 == 0 }.count() == 7)
    }
  }

  @Test("async forms, pages and forEachPage give the same objects as fetch")
  func asyncAndPages() async throws {
    let directory = try TemporaryDirectory("query-async")
    defer { directory.remove() }
    let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    let gigs = try seeded(store)
    let query = gigs.query().where(\.city, equals: "Porto").sorted(by: \.seats)
    let fetched = try await query.fetch()
    #expect(try await query.count() == fetched.count)
    #expect(try await query.ids() == fetched.map(\.id))
    #expect(try await query.first() == fetched.first)
    var paged: [Gig] = []
    for try await page in query.pages(size: 4) {
      #expect(page.count <= 4)
      paged += page
    }
    #expect(paged == fetched)
    var walked: [Gig] = []
    try query.forEachPage(size: 5) { walked += $0 }
    #expect(walked == fetched)
    var everything = 0
    try gigs.forEachPage(size: 7) { everything += $0.count }
    #expect(everything == 40)
  }

  @Test("an observed query yields its results, then again after a commit that changes them")
  func observeYieldsAfterChanges() async throws {
    let directory = try TemporaryDirectory("query-observe")
    defer { directory.remove() }
    let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    let gigs = try seeded(store)
    let stream = gigs.query().where(\.city, equals: "Braga").observe()
    var iterator = stream.makeAsyncIterator()
    #expect(try await iterator.next()?.isEmpty == true)
    try await gigs.save(.make("new", city: "Braga"))
    #expect(try await iterator.next()?.map(\.id) == ["new"])
    try await gigs.update(id: "new") { $0.seats = 99 }
    #expect(try await iterator.next()?.first?.seats == 99)
    try await gigs.delete(id: "new")
    #expect(try await iterator.next()?.isEmpty == true)
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// A collection whose indexes are recorded in the store is written only by code that keeps
/// them: anything else is refused before anything is written, and a query never answers from
/// an index that left an object out.
@Suite("Every write keeps the indexes or is refused")
struct IndexWriteGuardTests {
  /// Opens the store at `path`, runs `body`, closes it: one "launch" of an app.
  private func launch<R>(_ path: String, _ body: (CaskStore) throws -> R) throws -> R {
    let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    return try body(store)
  }

  private func expectRefused(_ body: () throws -> Void) {
    do {
      try body()
      Issue.record("the write was not refused")
    } catch let error as CaskError {
      guard case .writeRefused(let group, _) = error else {
        Issue.record("refused with \(error), not writeRefused")
        return
      }
      #expect(group == "gigs")
    } catch {
      Issue.record("refused with \(error), not a CaskError")
    }
  }

  @Test("a handle made without the indexes, in a later process, is refused and writes nothing")
  func undeclaredHandleRefused() throws {
    let directory = try TemporaryDirectory("guard-handle")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    try launch(path) { store throws in
      try store.gigs().save(contentsOf: (0..<20).map { Gig.make("g\($0)", city: $0 % 2 == 0 ? "Braga" : "Porto") })
    }
    try launch(path) { store throws in
      let plain = store.collection(Gig.self, named: "gigs")
      expectRefused { try plain.save(.make("new", city: "Braga")) }
      expectRefused { try plain.delete(id: "g1") }
      expectRefused { try plain.save(contentsOf: [.make("n1"), .make("n2")]) }
      #expect(plain.count == 20)
      #expect(try plain.get(id: "new") == nil)
      #expect(try plain.get(id: "g1") != nil)
    }
    try launch(path) { store throws in
      let gigs = store.gigs()
      #expect(try gigs.query().where(\.city, equals: "Braga").count() == 10)
      #expect(try gigs.verifyIndexes().isConsistent)
    }
  }

  @Test("raw puts, deletes and batches on an indexed collection's keys are refused")
  func rawEngineWritesRefused() throws {
    let directory = try TemporaryDirectory("guard-raw")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    try launch(path) { store throws in try store.gigs().save(.make("g1", city: "Braga")) }
    try launch(path) { store throws in
      let before = try store.keys()
      expectRefused { try store.put(Data("x".utf8), forKey: "gigs\u{0}g2") }
      expectRefused { _ = try store.delete("gigs\u{0}g1") }
      expectRefused {
        try store.batch { batch in
          try batch.put(Data("y".utf8), forKey: "other\u{0}o1")
          try batch.put(Data("x".utf8), forKey: "gigs\u{0}g3")
        }
      }
      // The kept group after several keys of another, and again after one: each group is
      // asked once, whatever order its keys come in.
      expectRefused {
        try store.batch { batch in
          try batch.put(Data("y".utf8), forKey: "other\u{0}o2")
          try batch.put(Data("y".utf8), forKey: "other\u{0}o3")
          try batch.put(Data("x".utf8), forKey: "gigs\u{0}g5")
        }
      }
      expectRefused {
        try store.batch { batch in
          try batch.put(Data("y".utf8), forKey: "other\u{0}o4")
          try batch.put(Data("y".utf8), forKey: "third\u{0}t1")
          try batch.put(Data("y".utf8), forKey: "other\u{0}o5")
          try batch.put(Data("x".utf8), forKey: "gigs\u{0}g6")
        }
      }
      expectRefused {
        try store.streamedBatch { batch in _ = try batch.put(Data("x".utf8), forKey: "gigs\u{0}g4") }
      }
      #expect(try store.keys() == before, "a refused write left something behind")
      // A collection with no recorded index is not affected.
      try store.put(Data("free".utf8), forKey: "other\u{0}o1")
      #expect(try store.get("other\u{0}o1") == Data("free".utf8))
    }
  }

  @Test("raw writes are refused by the name of the collection they write, among few or many declared")
  func rawWritesRefusedByExactName() throws {
    let directory = try TemporaryDirectory("guard-names")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    try launch(path) { store throws in try store.gigs().save(.make("g1", city: "Braga")) }
    // "gigs" recorded but declared in neither launch; other names declared around it: one that
    // begins with it, one it begins with, and then more than a handful.
    for declared in [["gigsx", "gig"], ["gigsx", "gig"] + (0..<10).map { "c\($0)" }] {
      try launch(path) { store throws in
        for name in declared {
          let other = store.collection(Gig.self, named: name, indexes: [.index("city", \.city)])
          try other.save(.make("o1", city: "Porto"))
        }
        expectRefused { try store.put(Data("x".utf8), forKey: "gigs\u{0}g2") }
        expectRefused {
          try store.batch { batch in
            try batch.put(Data("y".utf8), forKey: "gigsx\u{0}o2")
            try batch.put(Data("x".utf8), forKey: "gigs\u{0}g3")
          }
        }
        #expect(try store.get("gigs\u{0}g2") == nil)
        #expect(try store.get("gigsx\u{0}o2") == nil)
      }
    }
  }

  @Test("store.count counts the objects written, not the index entries kept for them")
  func storeCountLeavesOutIndexEntries() throws {
    try withIndexStore("count-index") { store, _ in
      try store.gigs().save(contentsOf: (0..<7).map { Gig.make("g\($0)") })
      try store.put(Data("n".utf8), forKey: "note")
      #expect(store.count == 8)
      #expect(store.stats().keys > 8)
    }
  }

  @Test("a handle without the indexes in the process that declared them keeps them")
  func undeclaredHandleBesideDeclaredKeeps() throws {
    try withIndexStore("guard-beside") { store, _ in
      let gigs = store.gigs()
      try gigs.save(.make("g1", city: "Braga"))
      let plain = store.collection(Gig.self, named: "gigs")
      try plain.save(.make("g2", city: "Braga"))
      try plain.delete(id: "g1")
      #expect(try gigs.query().where(\.city, equals: "Braga").ids() == ["g2"])
      #expect(try gigs.verifyIndexes().isConsistent)
    }
  }

  @Test("a handle of another type whose objects the declared type cannot read is refused, with the decoding error")
  func undecodableWriteRefused() throws {
    try withIndexStore("guard-type") { store, _ in
      let gigs = store.gigs()
      try gigs.save(.make("g1", city: "Braga"))
      let other = store.collection(DriftedGig.self, named: "gigs")
      do {
        try other.save(DriftedGig(id: "g2", city: "Braga", date: "today"))
        Issue.record("an object the indexes cannot read was written")
      } catch let error as CollectionError {
        guard case .decoding(let collection, _, _) = error else {
          Issue.record("\(error)")
          return
        }
        #expect(collection == "gigs")
      }
      #expect(try store.contains("gigs\u{0}g2") == false)
      #expect(try gigs.query().where(\.city, equals: "Braga").count() == 1)
    }
  }
}

/// The same events under a changed model: `date` is a `String` now.
struct DriftedGig: Codable, Identifiable, Sendable {
  var id: String
  var city: String
  var date: String
}

/// A model with a computed property, as apps declare them.
struct DatedGig: Codable, Identifiable, Sendable {
  var id: String
  var day: Int
  var year: Int { 2000 + day / 365 }
}

@Suite("Index builds and streams never skip an object silently")
struct IndexDecodingFailureTests {
  @Test("after a field's type changed, the rebuild throws the decoding error and queries throw it, never 0")
  func modelDriftThrows() throws {
    let directory = try TemporaryDirectory("drift-index")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    do {
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      try store.gigs().save(contentsOf: (0..<10).map { Gig.make("g\($0)", city: "Lisbon", day: Double($0)) })
    }
    let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    let drifted = store.collection(
      DriftedGig.self, named: "gigs", indexes: [.index("date", \.date), .index("city", \.city)])
    #expect(throws: CollectionError.self) { try drifted.buildIndexes() }
    #expect(try drifted.readyIndexes().contains("date") == false)
    #expect(throws: CollectionError.self) { try drifted.query().where(\.date, equals: "x").count() }
    #expect(throws: CollectionError.self) { try drifted.query().where(\.city, equals: "Lisbon").count() }
    #expect(throws: CollectionError.self) { try drifted.all() }
    let report = try drifted.verifyIndexes()
    #expect(report.undecodableObjects == 10)
    #expect(!report.isConsistent)
  }

  @Test("an index on a computed property needs a version, and then keeps one identity")
  func computedPropertyIdentity() throws {
    let directory = try TemporaryDirectory("computed-index")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    do {
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      let unversioned = store.collection(DatedGig.self, named: "dated", indexes: [.index("year", \.year)])
      do {
        try unversioned.save(DatedGig(id: "a", day: 400))
        Issue.record("an index on a computed property without a version was accepted")
      } catch let error as CollectionError {
        guard case .invalidIndex(_, let reason) = error else {
          Issue.record("\(error)")
          return
        }
        #expect(reason.contains("'year'"))
      }
      #expect(unversioned.count == 0)
    }
    for launch in 0..<2 {
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      let dated = store.collection(DatedGig.self, named: "dated", indexes: [.index("year", \.year, version: 1)])
      if launch == 0 { try dated.save(contentsOf: [DatedGig(id: "a", day: 400), DatedGig(id: "b", day: 10)]) }
      // Ready at the second launch without a build: the identity did not change.
      #expect(try dated.readyIndexes() == ["year"], "launch \(launch)")
      #expect(try dated.query().where(\.year, equals: 2001).ids() == ["a"])
      #expect(try dated.buildIndexes().isEmpty, "launch \(launch) rebuilt the index")
    }
  }

  @Test("an observed query yields its first results, then finishes with the error a later run throws")
  func observeSurfacesErrors() async throws {
    let directory = try TemporaryDirectory("observe-error")
    defer { directory.remove() }
    let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    let gigs = store.collection(Gig.self, named: "gigs")
    try await gigs.save(.make("g1", city: "Braga"))
    var iterator = gigs.query().filter { $0.city == "Braga" }.observe().makeAsyncIterator()
    #expect(try await iterator.next()?.map(\.id) == ["g1"])
    // An object of another shape in the same collection: the next run cannot decode it.
    try store.put(Data("not a gig".utf8), forKey: "gigs\u{0}g2")
    await #expect(throws: CollectionError.self) { _ = try await iterator.next() }
  }
}

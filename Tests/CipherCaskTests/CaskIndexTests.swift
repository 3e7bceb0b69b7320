import CaskTestSupport
import CipherCask
import Foundation
import Testing

@Suite("Secondary indexes: declaration and maintenance")
struct CaskIndexTests {
  @Test("saves, updates and deletes keep the entries: equality finds exactly the current objects")
  func maintenanceOnEveryWritePath() throws {
    try withIndexStore { store, _ in
      let gigs = store.gigs()
      try gigs.save(.make("a", city: "Lisbon"))
      try gigs.save(contentsOf: [.make("b", city: "Porto"), .make("c", city: "Lisbon")])
      #expect(try gigs.query().where(\.city, equals: "Lisbon").ids() == ["a", "c"])
      try gigs.update(id: "a") { $0.city = "Porto" }
      #expect(try gigs.query().where(\.city, equals: "Lisbon").ids() == ["c"])
      #expect(try gigs.query().where(\.city, equals: "Porto").ids() == ["a", "b"])
      try gigs.updateAll(where: { $0.city == "Porto" }) { $0.city = "Faro" }
      #expect(try gigs.query().where(\.city, equals: "Faro").count() == 2)
      try gigs.delete(id: "b")
      #expect(try gigs.query().where(\.city, equals: "Faro").ids() == ["a"])
      try gigs.deleteAll(where: { $0.city == "Faro" })
      #expect(try gigs.query().where(\.city, equals: "Faro").count() == 0)
      try store.batch { batch in
        try batch.save(.make("d", city: "Braga"), in: gigs)
        try batch.delete(id: "c", from: gigs)
      }
      #expect(try gigs.query().where(\.city, equals: "Braga").ids() == ["d"])
      #expect(try gigs.query().where(\.city, equals: "Lisbon").count() == 0)
      try store.transaction { transaction in
        try transaction.save(.make("e", city: "Braga"), in: gigs)
      }
      #expect(try gigs.query().where(\.city, equals: "Braga").ids() == ["d", "e"])
      _ = try gigs.upsert([.make("e", city: "Evora"), .make("f", city: "Evora")])
      #expect(try gigs.query().where(\.city, equals: "Evora").ids() == ["e", "f"])
      #expect(try gigs.removeAll() == 3)
      #expect(try gigs.query().where(\.city, equals: "Evora").count() == 0)
      #expect(try gigs.verifyIndexes().isConsistent)
    }
  }

  @Test("a batch that throws writes neither objects nor entries")
  func failedBatchWritesNoEntries() throws {
    try withIndexStore { store, _ in
      let gigs = store.gigs()
      try gigs.save(.make("a"))
      struct Stop: Error {}
      #expect(throws: Stop.self) {
        try store.batch { batch in
          try batch.save(.make("b"), in: gigs)
          throw Stop()
        }
      }
      #expect(try gigs.query().where(\.city, equals: "Lisbon").ids() == ["a"])
      #expect(try gigs.verifyIndexes().isConsistent)
    }
  }

  @Test("entries survive a reopen and a compaction without objects being decoded to rebuild them")
  func entriesSurviveReopenAndCompaction() throws {
    let directory = try TemporaryDirectory("index-reopen")
    defer { directory.remove() }
    do {
      let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
      let gigs = store.gigs()
      for n in 0..<50 { try gigs.save(.make("g\(n)", city: n % 2 == 0 ? "Lisbon" : "Porto", seats: n)) }
      for n in 0..<10 { try gigs.update(id: "g\(n)") { $0.city = "Faro" } }
      try store.compact()
      try store.close()
    }
    let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    let gigs = store.gigs()
    #expect(try gigs.readyIndexes().contains("city"))
    #expect(try gigs.query().where(\.city, equals: "Faro").count() == 10)
    #expect(try gigs.query().where(\.city, equals: "Lisbon").count() == 20)
    #expect(try gigs.query().where(\.seats, in: 40...45).ids().count == 6)
    #expect(try gigs.verifyIndexes().isConsistent)
  }

  @Test("a unique index refuses a second object with the value, in a save, a batch and an import")
  func uniqueViolationWritesNothing() throws {
    try withIndexStore { store, _ in
      let gigs = store.gigs()
      try gigs.save(.make("a", email: "x@example.com"))
      let violation = CollectionError.uniqueViolation(collection: "gigs", index: "email")
      #expect(throws: violation) { try gigs.save(.make("b", email: "x@example.com")) }
      #expect(throws: violation) {
        try gigs.save(contentsOf: [.make("c", email: "y@example.com"), .make("d", email: "y@example.com")])
      }
      #expect(throws: violation) { try gigs.upsert([.make("e", email: "x@example.com")]) }
      #expect(try gigs.ids() == ["a"])
      // The holder itself may save again, and a value freed in the same batch may be taken.
      try gigs.save(.make("a", seats: 3, email: "x@example.com"))
      try store.batch { batch in
        try batch.save(.make("a", email: "z@example.com"), in: gigs)
        try batch.save(.make("f", email: "x@example.com"), in: gigs)
      }
      #expect(try gigs.query().where(\.email, equals: "x@example.com").ids() == ["f"])
      // nil never collides: many objects may have no e-mail.
      try gigs.save(contentsOf: [.make("n1"), .make("n2")])
      #expect(try gigs.query().where(\.email, equals: nil).ids() == ["n1", "n2"])
      #expect(try gigs.verifyIndexes().isConsistent)
    }
  }

  @Test("the error names the collection and the index, never the value")
  func uniqueErrorHidesTheValue() throws {
    try withIndexStore { store, _ in
      let gigs = store.gigs()
      try gigs.save(.make("a", email: "secret@example.com"))
      do {
        try gigs.save(.make("b", email: "secret@example.com"))
        Issue.record("no error")
      } catch {
        let text = "\(error)" + String(reflecting: error)
        #expect(!text.contains("secret"))
        #expect(text.contains("email"))
      }
    }
  }

  @Test("an index declared on a collection that already has objects is built once, with progress")
  func buildOnAddWithProgress() throws {
    try withIndexStore { store, _ in
      let plain = store.collection(Gig.self, named: "late")
      for n in 0..<25 { try plain.save(.make("g\(n)", city: n < 5 ? "Lisbon" : "Porto")) }
      let indexed = store.collection(Gig.self, named: "late", indexes: [.index("city", \.city)])
      #expect(try indexed.readyIndexes().isEmpty)
      let steps = Locked<[IndexBuildProgress]>([])
      let built = try indexed.buildIndexes(chunkSize: 10) { progress in steps.withLock { $0.append(progress) } }
      #expect(built == ["city"])
      #expect(steps.withLock { $0.map(\.done) } == [10, 20, 25])
      #expect(try indexed.readyIndexes() == ["city"])
      #expect(try indexed.buildIndexes().isEmpty)
      #expect(try indexed.query().where(\.city, equals: "Lisbon").count() == 5)
      #expect(try indexed.verifyIndexes().isConsistent)
    }
  }

  @Test("a save marks ready only the indexes of a collection it finds empty; a ready index stays ready")
  func saveMarksReadyOnlyOnEmptyCollections() throws {
    try withIndexStore { store, _ in
      // Empty when the index is declared: the first save's entries are all of them.
      let fresh = store.collection(Gig.self, named: "fresh", indexes: [.index("city", \.city)])
      try fresh.save(.make("a", city: "Lisbon"))
      #expect(try fresh.readyIndexes() == ["city"])
      try fresh.save(.make("b", city: "Porto"))
      #expect(try fresh.readyIndexes() == ["city"])
      // A second index declared once the collection holds objects: saves keep it but cannot
      // make it complete, while the first stays ready.
      let more = store.collection(
        Gig.self, named: "fresh", indexes: [.index("city", \.city), .index("seats", \.seats)])
      try more.save(.make("c", city: "Lisbon", seats: 3))
      #expect(try more.readyIndexes() == ["city"])
      #expect(try more.buildIndexes() == ["seats"])
      try more.save(.make("d", city: "Porto", seats: 4))
      #expect(Set(try more.readyIndexes()) == ["city", "seats"])
      #expect(try more.query().where(\.seats, in: 3...4).ids() == ["c", "d"])
      #expect(try more.verifyIndexes().isConsistent)
    }
  }

  @Test("a changed definition is detected and rebuilt; the old entries are removed")
  func changedDefinitionIsRebuilt() throws {
    try withIndexStore { store, _ in
      let first = store.collection(Gig.self, named: "gigs", indexes: [.index("by", \.city)])
      for n in 0..<8 { try first.save(.make("g\(n)", city: "C\(n % 2)", seats: n)) }
      let groupsBefore = store.groups().count
      let second = store.collection(Gig.self, named: "gigs", indexes: [.index("by", \.seats)])
      #expect(try second.readyIndexes().isEmpty)
      #expect(try second.buildIndexes() == ["by"])
      #expect(try second.query().where(\.seats, in: 2...4).ids() == ["g2", "g3", "g4"])
      #expect(store.groups().count == groupsBefore)
      #expect(try second.verifyIndexes().isConsistent)
    }
  }

  @Test("dropIndex removes an index no longer declared; an unknown name is a typed error")
  func dropIndexRemovesEntries() throws {
    try withIndexStore { store, _ in
      let gigs = store.collection(Gig.self, named: "gigs", indexes: [.index("city", \.city), .index("seats", \.seats)])
      for n in 0..<5 { try gigs.save(.make("g\(n)")) }
      let keysBefore = store.stats().keys
      let fewer = store.collection(Gig.self, named: "gigs", indexes: [.index("city", \.city)])
      try fewer.dropIndex("seats")
      #expect(store.stats().keys == keysBefore - 5)
      #expect(throws: CollectionError.indexNotDeclared(collection: "gigs", index: "seats")) {
        try fewer.dropIndex("seats")
      }
      try fewer.save(.make("g9"))
      #expect(try fewer.verifyIndexes().isConsistent)
    }
  }

  @Test("entries dropped and built again are the ones later saves keep current")
  func rebuiltEntriesStayCurrent() throws {
    try withIndexStore { store, _ in
      let gigs = store.collection(Gig.self, named: "gigs", indexes: [.index("city", \.city)])
      for n in 0..<5 { try gigs.save(.make("g\(n)", city: "Lisbon")) }
      #expect(try gigs.query().where(\.city, equals: "Lisbon").count() == 5)
      // The change observer has found these entries once: it must not keep using them after
      // the drop, when the query below builds new ones.
      try gigs.save(.make("g5", city: "Lisbon"))
      try gigs.dropIndex("city")
      #expect(try gigs.query().where(\.city, equals: "Lisbon").count() == 6)
      try gigs.save(.make("g6", city: "Lisbon"))
      try gigs.save(.make("g0", city: "Porto"))
      #expect(try gigs.query().where(\.city, equals: "Lisbon").count() == 6)
      #expect(try gigs.query().where(\.city, equals: "Porto").count() == 1)
      #expect(try gigs.verifyIndexes().isConsistent)
    }
  }

  @Test("an index no longer declared is marked stale by the next write and rebuilt when declared again")
  func undeclaredIndexGoesStale() throws {
    try withIndexStore { store, _ in
      let gigs = store.collection(Gig.self, named: "gigs", indexes: [.index("city", \.city)])
      try gigs.save(.make("a", city: "Lisbon"))
      let without = store.collection(Gig.self, named: "gigs", indexes: [.index("seats", \.seats)])
      try without.save(.make("a", city: "Porto"))
      let again = store.collection(Gig.self, named: "gigs", indexes: [.index("city", \.city)])
      #expect(try again.readyIndexes().isEmpty)
      #expect(try again.query().where(\.city, equals: "Porto").ids() == ["a"])
      #expect(try again.readyIndexes() == ["city"])
      #expect(try again.query().where(\.city, equals: "Lisbon").count() == 0)
    }
  }

  @Test("collection names beginning with U+0001 are refused: index keys live there")
  func reservedPrefixIsRefused() throws {
    try withIndexStore { store, _ in
      let reserved = store.collection(Gig.self, named: "\u{1}cask.indexes")
      #expect(throws: CaskError.self) { try reserved.save(.make("a")) }
    }
  }

  @Test("invalid index names are refused with a typed error")
  func invalidIndexNames() throws {
    try withIndexStore { store, _ in
      let twice = store.collection(Gig.self, named: "g", indexes: [.index("a", \.city), .index("a", \.seats)])
      #expect(throws: CollectionError.self) { try twice.save(.make("x")) }
      let empty = store.collection(Gig.self, named: "h", indexes: [.index("", \.city)])
      #expect(throws: CollectionError.self) { try empty.buildIndexes() }
    }
  }

  @Test("a save into a collection declared with no index decodes nothing, one with an index decodes once")
  func saveWithoutIndexesDecodesNothing() throws {
    try withIndexStore { store, _ in
      let plainCoder = CountingCoder()
      let plain = store.collection(Gig.self, named: "plain", coder: plainCoder, indexes: [])
      try plain.save(Gig.make("g1", city: "Lisbon", day: 1, seats: 1))
      try plain.save(contentsOf: [Gig.make("g2", city: "Porto", day: 2, seats: 2)])
      #expect(plainCoder.decodes.load(ordering: .relaxed) == 0)
      let indexedCoder = CountingCoder()
      let indexed = store.collection(Gig.self, named: "indexed", coder: indexedCoder, indexes: [.index("city", \.city)])
      try indexed.save(Gig.make("g1", city: "Lisbon", day: 1, seats: 1))
      #expect(indexedCoder.decodes.load(ordering: .relaxed) == 1)
      #expect(try indexed.query().where(\.city, equals: "Lisbon").ids() == ["g1"])
      #expect(try plain.get(id: "g2")?.city == "Porto")
    }
  }

  @Test("a batch writing ids twice keeps each one's last texts, for a few ids and for many, in two collections")
  func batchKeepsEachIDsLastWrite() throws {
    try withIndexStore { store, _ in
      let gigs = store.gigs()
      let others = store.gigs(named: "others")
      // 3 ids are found in the batch by comparing them, 30 through a table: both must agree.
      for count in [3, 30] {
        try gigs.save(.make("held", email: "taken@example.com"))
        try store.batch { batch in
          for round in 0..<2 {
            for number in 0..<count {
              let city = round == 0 ? "Lisbon" : "Porto\(number % 2)"
              try batch.save(.make("g\(number)", city: city, email: "m\(number)r\(round)@example.com"), in: gigs)
              try batch.save(.make("o\(number)", city: round == 0 ? "Faro" : "Braga"), in: others)
            }
          }
          // The holder gives its value up in the batch, and an object written before takes it.
          try batch.save(.make("held", email: "free@example.com"), in: gigs)
          try batch.save(.make("g0", city: "Porto0", email: "taken@example.com"), in: gigs)
        }
        let evens = stride(from: 0, to: count, by: 2).map { "g\($0)" }.sorted()
        #expect(try gigs.query().where(\.city, equals: "Lisbon").ids() == ["held"])
        #expect(try gigs.query().where(\.city, equals: "Porto0").ids().sorted() == evens)
        #expect(try gigs.query().where(\.email, equals: "taken@example.com").ids() == ["g0"])
        #expect(try gigs.query().where(\.email, equals: "m0r1@example.com").count() == 0)
        #expect(try gigs.query().where(\.email, equals: "m1r0@example.com").count() == 0)
        #expect(try others.query().where(\.city, equals: "Faro").count() == 0)
        #expect(try others.query().where(\.city, equals: "Braga").count() == count)
        // Two ids of one batch taking one value are refused, however many ids the batch has.
        #expect(throws: CollectionError.uniqueViolation(collection: "gigs", index: "email")) {
          try store.batch { batch in
            for number in 0..<count { try batch.save(.make("n\(number)", email: "n\(number)@example.com"), in: gigs) }
            try batch.save(.make("n0", email: "same@example.com"), in: gigs)
            try batch.save(.make("n\(count - 1)", email: "same@example.com"), in: gigs)
          }
        }
        #expect(try gigs.verifyIndexes().isConsistent)
        #expect(try others.verifyIndexes().isConsistent)
        try gigs.removeAll()
        try others.removeAll()
      }
    }
  }
}

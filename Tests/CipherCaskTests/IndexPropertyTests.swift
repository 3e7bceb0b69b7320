import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Random writes against a plain dictionary; every query kind checked against a brute-force
/// answer from the dictionary.
@Suite("Secondary indexes against a model")
struct IndexPropertyTests {
  private static let cities = ["Lisbon", "Porto", "Faro", "Évora", "a\u{0}b", ""]
  private static let emails: [String?] = [nil, "a@x", "b@x", "c@x", "d@x", "e@x", "f@x"]

  private func randomGig(_ random: inout SeededRandom, id: String) -> Gig {
    var gig = Gig.make(
      id, city: Self.cities.randomElement(using: &random)!, day: Double(Int.random(in: -5...5, using: &random)),
      seats: Int.random(in: -20...20, using: &random), email: Self.emails.randomElement(using: &random)!)
    gig.attendees = (0..<Int.random(in: 0...3, using: &random)).map { _ in "p\(Int.random(in: 0...5, using: &random))" }
    return gig
  }

  /// Whether saving `gigs` over `model` keeps every non-nil e-mail on one object.
  private func keepsUnique(_ model: [String: Gig], adding gigs: [Gig]) -> Bool {
    var next = model
    for gig in gigs { next[gig.id] = gig }
    let emails = next.values.compactMap(\.email)
    return Set(emails).count == emails.count
  }

  private func byBytes(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

  private func check(_ gigs: CaskCollection<Gig>, against model: [String: Gig], _ random: inout SeededRandom) throws {
    let all = Array(model.values)
    func ids(_ predicate: (Gig) -> Bool) -> [String] { all.filter(predicate).map(\.id).sorted(by: byBytes) }
    let city = Self.cities.randomElement(using: &random)!
    let low = Int.random(in: -20...20, using: &random)
    let high = low + Int.random(in: 0...15, using: &random)
    let person = "p\(Int.random(in: 0...5, using: &random))"
    #expect(try gigs.query().where(\.city, equals: city).ids() == ids { $0.city == city })
    #expect(try gigs.query().where(\.city, equals: city).count() == ids { $0.city == city }.count)
    #expect(try gigs.query().where(\.seats, in: low...high).ids() == ids { (low...high).contains($0.seats) })
    #expect(try gigs.query().where(\.seats, in: low..<high).count() == ids { (low..<high).contains($0.seats) }.count)
    #expect(try gigs.query().where(\.attendees, contains: person).ids() == ids { $0.attendees.contains(person) })
    #expect(try gigs.query().where(\.rank, equals: nil).ids() == ids { $0.rank == nil })
    #expect(try gigs.query().where(\.email, equals: nil).count() == ids { $0.email == nil }.count)
    let and = try gigs.query().where(\.city, equals: city).where(\.seats, in: low...high).ids()
    #expect(and == ids { $0.city == city && (low...high).contains($0.seats) })
    let offset = Int.random(in: 0...6, using: &random)
    let limit = Int.random(in: 1...5, using: &random)
    let ascending = Bool.random(using: &random)
    let sorted = all.sorted { a, b in
      a.date != b.date ? a.date < b.date : byBytes(a.id, b.id)
    }
    let ordered = ascending ? sorted : sorted.reversed()
    let page = try gigs.query().sorted(by: \.date, ascending: ascending).offset(offset).limit(limit).ids()
    #expect(page == Array(ordered.dropFirst(offset).prefix(limit)).map(\.id))
    let cityPage = try gigs.query().where(\.city, equals: city).sorted(by: \.date, ascending: ascending)
      .offset(offset).limit(limit).fetch()
    #expect(cityPage.map(\.id) == Array(ordered.filter { $0.city == city }.dropFirst(offset).prefix(limit)).map(\.id))
    #expect(cityPage.allSatisfy { model[$0.id] == $0 })
    try checkComposites(gigs, against: model, city: city, offset: offset, limit: limit, &random)
  }

  /// Queries answered by the composite indexes (city, date) and (city, seats), each checked
  /// against the model and against the plan that `explain()` reports.
  private func checkComposites(
    _ gigs: CaskCollection<Gig>, against model: [String: Gig], city: String, offset: Int, limit: Int,
    _ random: inout SeededRandom
  ) throws {
    let all = Array(model.values)
    func ids(_ predicate: (Gig) -> Bool) -> [String] { all.filter(predicate).map(\.id).sorted(by: byBytes) }
    let low = Int.random(in: -20...20, using: &random)
    let high = low + Int.random(in: 0...15, using: &random)
    let seats = Int.random(in: -20...20, using: &random)
    let day = Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -5...5, using: &random)) * 86_400)
    let ascending = Bool.random(using: &random)

    let both = gigs.query().where(\.city, equals: city).where(\.seats, equals: seats)
    #expect(try both.explain().hasPrefix("index 'citySeats' (equals)"))
    #expect(try both.ids() == ids { $0.city == city && $0.seats == seats })
    #expect(try both.count() == ids { $0.city == city && $0.seats == seats }.count)
    let onDay = try gigs.query().where(\.date, equals: day).where(\.city, equals: city).ids()
    #expect(onDay == ids { $0.city == city && $0.date == day })

    let closed = gigs.query().where(\.city, equals: city).where(\.seats, in: low...high)
    #expect(try closed.explain().hasPrefix("index 'citySeats' (range)"))
    #expect(try closed.ids() == ids { $0.city == city && (low...high).contains($0.seats) })
    #expect(try closed.count() == ids { $0.city == city && (low...high).contains($0.seats) }.count)
    let open = try gigs.query().where(\.city, equals: city).where(\.seats, in: low..<high).ids()
    #expect(open == ids { $0.city == city && (low..<high).contains($0.seats) })
    let from = try gigs.query().where(\.city, equals: city).where(\.seats, in: low...).ids()
    #expect(from == ids { $0.city == city && $0.seats >= low })
    let below = try gigs.query().where(\.city, equals: city).where(\.seats, in: ..<high).ids()
    #expect(below == ids { $0.city == city && $0.seats < high })

    func page<V: Comparable>(_ key: (Gig) -> V) -> [String] {
      let sorted = all.filter { $0.city == city }.sorted { a, b in
        key(a) != key(b) ? key(a) < key(b) : byBytes(a.id, b.id)
      }
      return Array((ascending ? sorted : sorted.reversed()).dropFirst(offset).prefix(limit)).map(\.id)
    }
    let byDate = gigs.query().where(\.city, equals: city).sorted(by: \.date, ascending: ascending)
      .offset(offset).limit(limit)
    #expect(try byDate.explain() == "index 'cityDate' (range); order from index 'cityDate'")
    let datePage = try byDate.fetch()
    #expect(datePage.map(\.id) == page(\.date))
    #expect(datePage.allSatisfy { model[$0.id] == $0 })
    let bySeats = gigs.query().where(\.city, equals: city).sorted(by: \.seats, ascending: ascending)
      .offset(offset).limit(limit)
    #expect(try bySeats.ids() == page(\.seats))
    let ranged = try gigs.query().where(\.city, equals: city).where(\.seats, in: low...high)
      .sorted(by: \.seats, ascending: ascending).ids()
    let inRange = all.filter { $0.city == city && (low...high).contains($0.seats) }.sorted { a, b in
      a.seats != b.seats ? a.seats < b.seats : byBytes(a.id, b.id)
    }
    #expect(ranged == (ascending ? inRange : inRange.reversed()).map(\.id))
  }

  /// How the workload opens its store: a new store in format `version`, and a checkpoint at
  /// every close and after every few kilobytes of log, whatever the store's size, so that
  /// reopens load the directory from a checkpoint and replay only the log after it.
  private func options(version: UInt16) -> CaskStore.Options {
    var options = testStoreOptions
    options.newStoreFormatVersion = version
    options.checkpoints = CaskStore.Checkpoints(interval: 8 << 10, minimumKeys: 1, spacing: 0)
    return options
  }

  @Test(
    "random saves, updates, deletes, batches, failed batches, reopens, checkpoints, compactions, key rotations, upgrades, undeclared handles, raw writes and model drift",
    arguments: [UInt16(2), 3, CaskFormat.formatVersion]
  )
  func randomWorkload(startingVersion: UInt16) throws {
    var random = SeededRandom.make(test: "IndexPropertyTests, from version \(startingVersion)")
    let directory = try TemporaryDirectory("index-property")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    let options = options(version: startingVersion)
    var store = try CaskStore(path: path, password: "pw", options: options)
    // The store's format version as the workload changes it, and how many reopens of a store
    // that takes checkpoints (version 3 and later) there were, and how many used one.
    var version = startingVersion
    var reopensWithCheckpoints = 0
    var opensFromCheckpoint = 0
    var stepsThroughSortedPages = 0
    func noteReopen(_ store: CaskStore) {
      let recovery = store.stats().recovery
      #expect(recovery.checkpointIgnored == nil)
      if version >= 3 { reopensWithCheckpoints += 1 }
      if recovery.segmentsFromCheckpoint > 0 { opensFromCheckpoint += 1 }
    }
    defer { try? store.close() }
    var gigs = store.gigs(composites: true)
    var model: [String: Gig] = [:]
    let violation = CollectionError.uniqueViolation(collection: "gigs", index: "email")
    for step in 0..<testIterations(300) {
      let id = "g\(Int.random(in: 0..<30, using: &random))"
      switch Int.random(in: 0..<118, using: &random) {
      case 0..<35:
        let gig = randomGig(&random, id: id)
        if keepsUnique(model, adding: [gig]) {
          try gigs.save(gig)
          model[id] = gig
        } else {
          #expect(throws: violation) { try gigs.save(gig) }
        }
      case 35..<45:
        let seats = Int.random(in: -20...20, using: &random)
        let updated = try gigs.update(id: id) { $0.seats = seats }
        #expect((updated != nil) == (model[id] != nil))
        model[id]?.seats = seats
      case 45..<60:
        #expect(try gigs.delete(id: id) == (model.removeValue(forKey: id) != nil))
      case 60..<75:
        let batch = (0..<Int.random(in: 1...4, using: &random)).map { _ in
          randomGig(&random, id: "g\(Int.random(in: 0..<30, using: &random))")
        }
        let deleted = "g\(Int.random(in: 0..<30, using: &random))"
        var after = model
        for gig in batch { after[gig.id] = gig }
        after[deleted] = nil
        let unique = Set(after.values.compactMap(\.email)).count == after.values.compactMap(\.email).count
        do {
          try store.batch { batchWrites in
            for gig in batch { try batchWrites.save(gig, in: gigs) }
            try batchWrites.delete(id: deleted, from: gigs)
          }
          #expect(unique)
          model = after
        } catch let error as CollectionError {
          #expect(error == violation)
          #expect(!unique)
        }
      case 75..<82:
        struct Abandon: Error {}
        #expect(throws: Abandon.self) {
          try store.transaction { transaction in
            try transaction.save(randomGig(&random, id: id), in: gigs)
            throw Abandon()
          }
        }
      case 82..<88:
        let city = Self.cities.randomElement(using: &random)!
        let moved = try gigs.updateAll(where: { $0.city == city }, { $0.city = "Moved" })
        #expect(moved == model.values.filter { $0.city == city }.count)
        for (key, gig) in model where gig.city == city { model[key]?.city = "Moved" }
      case 88..<93:
        try store.close()
        store = try CaskStore(path: path, password: "pw", options: options)
        noteReopen(store)
        gigs = store.gigs(composites: true)
      case 93..<97:
        try store.compact()
      case 97..<101:
        // A handle without the declaration, in the process that declared it: kept.
        let plain = store.collection(Gig.self, named: "gigs")
        let gig = randomGig(&random, id: id)
        if keepsUnique(model, adding: [gig]) {
          try plain.save(gig)
          model[id] = gig
        } else {
          #expect(throws: violation) { try plain.save(gig) }
        }
      case 101..<104:
        // Raw engine writes to the collection's keys: an object the declared type reads is
        // kept like a save; bytes it cannot read are refused, and nothing is written.
        if Bool.random(using: &random) {
          let gig = randomGig(&random, id: id)
          if keepsUnique(model, adding: [gig]) {
            try store.put(try JSONCaskCoder().encode(gig), forKey: "gigs\u{0}\(id)")
            model[id] = gig
          }
        } else {
          #expect(throws: CollectionError.self) { try store.put(Data("junk".utf8), forKey: "gigs\u{0}\(id)") }
        }
      case 104..<107:
        // A later process that writes before declaring the indexes is refused.
        try store.close()
        store = try CaskStore(path: path, password: "pw", options: options)
        noteReopen(store)
        // (Before the first object was written the store records no index, and nothing is
        // refused; once one was, the catalogue stays, and every write is refused.)
        if !model.isEmpty {
          let plain = store.collection(Gig.self, named: "gigs")
          #expect(throws: CaskError.self) { try plain.save(randomGig(&random, id: id)) }
          #expect(throws: CaskError.self) { try store.delete("gigs\u{0}\(id)") }
        }
        gigs = store.gigs(composites: true)
      case 107..<109:
        // A process whose model drifted (a field's type changed): its build and its queries
        // throw, never answer short; the store is left as it was.
        try store.close()
        store = try CaskStore(path: path, password: "pw", options: options)
        noteReopen(store)
        // `seats` is a number in both coders' objects, so no stored object reads as a String.
        let drifted = store.collection(SeatsDriftedGig.self, named: "gigs", indexes: [.index("seats", \.seats)])
        if !model.isEmpty {
          #expect(throws: CollectionError.self) { try drifted.buildIndexes() }
          #expect(throws: CollectionError.self) { try drifted.query().where(\.seats, equals: "x").count() }
        }
        try store.close()
        store = try CaskStore(path: path, password: "pw", options: options)
        noteReopen(store)
        gigs = store.gigs(composites: true)
      case 112..<115:
        // A password change starts a new key epoch (a version 3 store becomes version 4);
        // the rotation's compaction then seals every record again under the new key.
        try store.changePassword(to: "pw")
        if version == 3 { version = 4 }
        if Bool.random(using: &random) { try store.rotateKeys() }
        try check(gigs, against: model, &random)
      case 115..<117:
        // An upgrade to the current format (nothing to do once there), then on with the
        // upgraded store.
        try store.close()
        let report = try CaskStore.upgrade(at: path, password: "pw", options: options)
        #expect(report.version == CaskFormat.formatVersion)
        version = CaskFormat.formatVersion
        store = try CaskStore(path: path, password: "pw", options: options)
        noteReopen(store)
        gigs = store.gigs(composites: true)
        try check(gigs, against: model, &random)
      default:
        try check(gigs, against: model, &random)
      }
      if step % 25 == 0 { try check(gigs, against: model, &random) }
      // Queries and saves after an open from a checkpoint read the indexes through its sorted
      // pages until something builds their entries.
      if store.stats().sortedPageCacheBytes > 0 { stepsThroughSortedPages += 1 }
    }
    try check(gigs, against: model, &random)
    #expect(try gigs.verifyIndexes().isConsistent)
    #expect(gigs.count == model.count)
    print(
      "[IndexPropertyTests, from version \(startingVersion)] \(opensFromCheckpoint) of \(reopensWithCheckpoints) reopens from a checkpoint, \(stepsThroughSortedPages) steps with sorted pages read"
    )
    #expect(reopensWithCheckpoints == 0 || opensFromCheckpoint > 0)
    #expect(opensFromCheckpoint == 0 || stepsThroughSortedPages > 0)
  }
}

/// The gigs under a changed model: `seats` became a `String`.
struct SeatsDriftedGig: Codable, Identifiable, Sendable {
  var id: String
  var seats: String
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

// The code samples of Docs/GUIDE.md section 10 (indexes and queries), compiled and run here;
// `SampleDriftTests` checks that they still appear in the guide line for line.

struct Gathering: Codable, Identifiable, Sendable {
  var id: String
  var title: String
  var city: String
  var date: Date
  var attendees: [String]
  var email: String?
}

func gatherings(in store: CaskStore) -> CaskCollection<Gathering> {
  store.collection(
    Gathering.self, named: "gatherings",
    indexes: [
      .index("city", \.city), .index("date", \.date),
      .index("attendee", each: \.attendees), .unique("email", \.email),
    ])
}

func newestInLisbon(_ gatherings: CaskCollection<Gathering>, page: Int) throws -> [Gathering] {
  try gatherings.query()
    .where(\.city, equals: "Lisbon")
    .sorted(by: \.date, ascending: false)
    .offset(page * 20).limit(20)
    .fetch()
}

func attendance(of person: String, in gatherings: CaskCollection<Gathering>) throws -> Int {
  try gatherings.query().where(\.attendees, contains: person).count()
}

func isTaken(_ email: String, in gatherings: CaskCollection<Gathering>) throws -> Bool {
  try gatherings.query().where(\.email, equals: email).first() != nil
}

func addIndexToFullCollection(_ store: CaskStore) throws {
  let gatherings = store.collection(
    Gathering.self, named: "gatherings", indexes: [.index("city", \.city), .index("title", \.title)])
  try gatherings.buildIndexes { progress in
    print("\(progress.index): \(progress.done) of \(progress.total)")
  }
}

func newestInLisbonFromComposite(_ store: CaskStore, page: Int) throws -> [Gathering] {
  let gatherings = store.collection(
    Gathering.self, named: "gatherings",
    indexes: [.index("city", \.city), .index("cityDate", \.city, \.date)])
  return try gatherings.query()
    .where(\.city, equals: "Lisbon")
    .sorted(by: \.date, ascending: false)
    .offset(page * 20).limit(20)
    .fetch()
}

func showLisbon(_ gatherings: CaskCollection<Gathering>, show: ([Gathering]) -> Void) async {
  do {
    for try await results in gatherings.query().where(\.city, equals: "Lisbon").observe() {
      show(results)
    }
  } catch {
    print("the query stopped: \(error)")
  }
}

@Suite("Guide samples: indexes and queries")
struct GuideIndexExamplesTests {
  /// 45 gatherings, an hour apart, alternating between Lisbon and Porto; every fifth with
  /// "ann" attending, the eighth with an e-mail.
  private static func fill(_ all: CaskCollection<Gathering>) throws {
    for n in 0..<45 {
      try all.save(
        Gathering(
          id: "g\(n)", title: "Talk \(n)", city: n % 2 == 0 ? "Lisbon" : "Porto",
          date: Date(timeIntervalSinceReferenceDate: Double(n) * 3_600), attendees: n % 5 == 0 ? ["ann"] : [],
          email: n == 7 ? "host@example.com" : nil))
    }
  }

  @Test("the guide's index samples run and answer as the guide says")
  func guideSamples() throws {
    try withIndexStore("guide-indexes") { store, _ in
      let all = gatherings(in: store)
      try Self.fill(all)
      let first = try newestInLisbon(all, page: 0)
      #expect(first.count == 20)
      #expect(first.first?.id == "g44")
      #expect(try newestInLisbon(all, page: 1).map(\.id) == ["g4", "g2", "g0"])
      #expect(try attendance(of: "ann", in: all) == 9)
      #expect(try isTaken("host@example.com", in: all))
      #expect(try !isTaken("guest@example.com", in: all))
      try addIndexToFullCollection(store)
      let widened = store.collection(
        Gathering.self, named: "gatherings", indexes: [.index("city", \.city), .index("title", \.title)])
      #expect(try widened.readyIndexes() == ["city", "title"])
    }
  }

  @Test("the guide's observing sample shows the results until the store closes")
  func observeSample() async throws {
    let directory = try TemporaryDirectory("guide-observe")
    defer { directory.remove() }
    let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    let all = gatherings(in: store)
    try await Task { try Self.fill(all) }.value
    let shown = Locked<[Int]>([])
    let watcher = Task { await showLisbon(all) { results in shown.withLock { $0.append(results.count) } } }
    #expect(try await eventually(timeout: 30) { shown.withLock { $0 } == [23] })
    try store.close()
    await watcher.value
    #expect(shown.withLock { $0 } == [23])
  }

  @Test("the guide's composite index sample pages a city by date as the guide says")
  func compositeSample() throws {
    try withIndexStore("guide-composite") { store, _ in
      try Self.fill(gatherings(in: store))
      #expect(try newestInLisbonFromComposite(store, page: 1).map(\.id) == ["g4", "g2", "g0"])
      let declared = store.collection(
        Gathering.self, named: "gatherings",
        indexes: [.index("city", \.city), .index("cityDate", \.city, \.date)])
      let query = declared.query().where(\.city, equals: "Lisbon").sorted(by: \.date, ascending: false)
      #expect(try query.explain() == "index 'cityDate' (range); order from index 'cityDate'")
      #expect(try newestInLisbonFromComposite(store, page: 0).first?.id == "g44")
    }
  }
}

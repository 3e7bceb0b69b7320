import CaskEngine
import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Every crash state of the collection layer's writes (a streamed JSON import into an indexed
/// collection, saves and deletes whose entries are attached to the objects' records, an index
/// build over existing objects), under both persistence
/// models: the objects are those of an acknowledged state, and the indexes agree with them,
/// checked by `verifyIndexes()` and by brute force (each city's query against a filter).
@Suite("Crash states of collections")
struct CollectionCrashStateTests {
  struct Venue: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var city: String
    var seats: Int
  }

  static let cities = ["Lisbon", "Porto", "Braga"]
  static let runner = CrashStateRunner.standard

  static func venue(_ number: Int) -> Venue {
    Venue(id: "v\(number)", city: cities[number % cities.count], seats: number * 10)
  }

  static func encoded(_ venue: Venue) -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return (try? encoder.encode(venue)) ?? Data()
  }

  static func venues(_ store: CaskStore, indexed: Bool) -> CaskCollection<Venue> {
    indexed
      ? store.collection(Venue.self, named: "venues", indexes: [.index("city", \.city)])
      : store.collection(Venue.self, named: "venues")
  }

  /// Objects by id, each as sorted JSON: what the model compares.
  static func objects(_ store: CaskStore) throws -> [String: Data] {
    var result: [String: Data] = [:]
    for venue in try venues(store, indexed: true).all() { result[venue.id] = encoded(venue) }
    return result
  }

  /// The index agrees with the objects: by `verifyIndexes()` and city by city.
  static func indexesAgree(_ store: CaskStore, _ root: String) throws -> [String] {
    let collection = venues(store, indexed: true)
    var problems: [String] = []
    let report = try collection.verifyIndexes()
    if !report.isConsistent { problems.append("verifyIndexes: \(report)") }
    let all = try collection.all()
    for city in cities {
      let queried = try collection.query().where(\.city, equals: city).count()
      let counted = all.filter { $0.city == city }.count
      if queried != counted { problems.append("the city index finds \(queried) in \(city), the objects \(counted)") }
    }
    return problems
  }

  static func expectNoViolation(_ workload: CrashStateWorkload) throws {
    for report in try runner.run(workload) {
      print(report)
      #expect(report.states > 0)
      #expect(
        report.violationCount == 0,
        "\(report.workload) / \(report.model): \(report.violationCount) violations, e.g. \(report.violations)")
    }
  }

  @Test("a streamed JSON import into an indexed collection is whole or absent, its index with it")
  func streamedImport() throws {
    let json = try TemporaryDirectory("crash-import")
    defer { json.remove() }
    let imported = (3..<9).map(Self.venue)
    let file = URL(fileURLWithPath: json.file("venues.json"))
    try JSONEncoder().encode(imported).write(to: file)
    var workload = CrashStateWorkload(
      "streamed import (collection)",
      steps: [
        CrashStateWorkload.Step(
          "import", durable: true,
          effect: { model in for venue in imported { model[venue.id] = Self.encoded(venue) } },
          run: { session in _ = try Self.venues(session.store(), indexed: true).importJSON(contentsOf: file) })
      ])
    workload.initialModel = Dictionary(uniqueKeysWithValues: (0..<3).map { ("v\($0)", Self.encoded(Self.venue($0))) })
    workload.prepare = { root, options in
      try CrashStateWorkload.makeStore(root, options) { store in
        try Self.venues(store, indexed: true).save(contentsOf: (0..<3).map(Self.venue))
      }
    }
    workload.contents = Self.objects
    workload.check = Self.indexesAgree
    try Self.expectNoViolation(workload)
  }

  @Test("saves, overwrites and deletes of indexed objects, their entries attached to their records, never part-applied")
  func attachedWrites() throws {
    let moved = Venue(id: "v1", city: "Braga", seats: 11)
    let added = Self.venue(7)
    var workload = CrashStateWorkload(
      "attached index writes (collection)",
      steps: [
        CrashStateWorkload.Step(
          "overwrite with another city", durable: true, effect: { $0["v1"] = Self.encoded(moved) },
          run: { session in try Self.venues(session.store(), indexed: true).save(moved) }),
        CrashStateWorkload.Step(
          "delete", durable: true, effect: { $0["v2"] = nil },
          run: { session in _ = try Self.venues(session.store(), indexed: true).delete(id: "v2") }),
        CrashStateWorkload.Step(
          "save a new object", durable: true, effect: { $0["v7"] = Self.encoded(added) },
          run: { session in try Self.venues(session.store(), indexed: true).save(added) }),
      ])
    workload.initialModel = Dictionary(uniqueKeysWithValues: (0..<3).map { ("v\($0)", Self.encoded(Self.venue($0))) })
    workload.prepare = { root, options in
      try CrashStateWorkload.makeStore(root, options) { store in
        try Self.venues(store, indexed: true).save(contentsOf: (0..<3).map(Self.venue))
      }
    }
    workload.contents = Self.objects
    workload.check = Self.indexesAgree
    try Self.expectNoViolation(workload)
  }

  @Test("an index built over existing objects is never used half-built")
  func indexBuild() throws {
    var workload = CrashStateWorkload(
      "index build (collection)",
      steps: [
        CrashStateWorkload.Step("build index", durable: true) { session in
          try Self.venues(session.store(), indexed: true).buildIndexes(chunkSize: 4)
        }
      ])
    workload.initialModel = Dictionary(uniqueKeysWithValues: (0..<10).map { ("v\($0)", Self.encoded(Self.venue($0))) })
    workload.prepare = { root, options in
      try CrashStateWorkload.makeStore(root, options) { store in
        try Self.venues(store, indexed: false).save(contentsOf: (0..<10).map(Self.venue))
      }
    }
    workload.contents = Self.objects
    workload.check = Self.indexesAgree
    try Self.expectNoViolation(workload)
  }
}

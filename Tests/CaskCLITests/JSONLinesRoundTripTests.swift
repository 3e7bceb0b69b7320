import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `cask export STORE - --collection NAME --format jsonl | cask import STORE2 - --collection
/// NAME --id-key KEY` reproduces the collection, through the built binary.
@Suite("cask export --format jsonl round-trips through cask import")
struct JSONLinesRoundTripTests {
  let password = "round-trip-pw"

  /// A model with a field of each kind JSON carries, and an index to rebuild.
  struct Reading: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var sensor: String
    var value: Double
    var count: Int64
    var taken: Date
    var tags: [String]
    var note: String?
    var raw: Data
    var link: URL
    var nested: [String: [Int]]
  }

  static func readings(in store: CaskStore, coder: any CaskCoder = BinaryCaskCoder()) -> CaskCollection<Reading> {
    store.collection(Reading.self, named: "readings", coder: coder, indexes: [.index("sensor", \.sensor)])
  }

  static func sample(_ index: Int) -> Reading {
    Reading(
      id: "r\(index)", sensor: "s\(index % 4)", value: Double(index) / 3, count: Int64.max - Int64(index),
      taken: Date(timeIntervalSinceReferenceDate: Double(index) * 1000.125), tags: ["a\"b", "é\n", "\u{0}"],
      note: index % 2 == 0 ? nil : "line\r\nbreak", raw: Data([0, 0xFF, UInt8(index & 0xFF)]),
      link: URL(string: "https://example.com/r/\(index)?q=1")!, nested: ["k\(index)": [index, -index]])
  }

  @Test(
    "export to standard output then import from standard input gives the same ids, objects and indexes",
    arguments: ["binary", "json"])
  func exportThenImportReproducesTheCollection(coderName: String) throws {
    let coder: any CaskCoder = coderName == "json" ? JSONCaskCoder() : BinaryCaskCoder()
    let cask = try CaskRunner("jsonl-round-trip-\(coderName)")
    defer { cask.remove() }
    let originals = (1...120).map(Self.sample)
    do {
      let store = try CaskStore(path: cask.path("a"), password: password, options: .init(durability: .never))
      try Self.readings(in: store, coder: coder).save(contentsOf: originals)
      try store.put(Data("other".utf8), forKey: "loose key")
      try store.close()
    }
    let exported = try cask.run(
      ["export", "a", "-", "--collection", "readings", "--format", "jsonl"], password: password)
    #expect(exported.status == 0, "\(exported.err)")
    #expect(
      exported.err == "Exported 120 values of collection 'readings' of store 'a' to standard output as JSON Lines.\n")
    let lines = exported.stdout.split(separator: 0x0A)
    #expect(lines.count == 120)
    #expect(lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0))) is [String: Any] })
    _ = try cask.createStore("b", password: password)
    let imported = try cask.run(
      ["import", "b", "-", "--collection", "readings", "--id-key", "id"], password: password, stdin: exported.stdout)
    #expect(imported.status == 0, "\(imported.err)")
    #expect(imported.out == "Imported 120 objects into collection 'readings' of store 'b': 120 inserted, 0 replaced.\n")
    let store = try CaskStore(path: cask.path("b"), password: password)
    defer { try? store.close() }
    let copy = Self.readings(in: store, coder: coder)
    #expect(try copy.ids().sorted() == originals.map(\.id).sorted())
    #expect(try copy.all().sorted { $0.id < $1.id } == originals.sorted { $0.id < $1.id })
    #expect(try store.keys(inGroup: "readings").count == 120)
    #expect(try !store.contains("loose key"))
    #expect(try copy.buildIndexes() == ["sensor"])
    #expect(try copy.verifyIndexes().isConsistent)
    #expect(try copy.query().where(\.sensor, equals: "s1").fetch().count == 30)
  }

  /// The outcome of `cask export ... --collection readings --format jsonl` of a store that
  /// `fill` wrote.
  private func exportOfReadings(_ name: String, _ fill: (CaskStore) throws -> Void) throws -> CaskResult {
    let cask = try CaskRunner(name)
    defer { cask.remove() }
    do {
      let store = try CaskStore(path: cask.path("a"), password: password, options: .init(durability: .never))
      try fill(store)
      try store.close()
    }
    return try cask.run(["export", "a", "-", "--collection", "readings", "--format", "jsonl"], password: password)
  }

  @Test("a collection export refuses a binary object JSON cannot hold (a NaN), naming no id")
  func binaryObjectWithNaNIsRefused() throws {
    let result = try exportOfReadings("jsonl-binary-nan") { store in
      var reading = Self.sample(7)
      reading.value = .nan
      try store.collection(Reading.self, named: "readings", coder: BinaryCaskCoder()).save(reading)
    }
    #expect(result.status == 1)
    #expect(
      result.err.hasPrefix("Error: collection 'readings' holds an object that JSON cannot hold"), "\(result.err)")
    #expect(!result.err.contains("r7"))
  }

  @Test("a collection export refuses a value that is not a JSON object, naming no id")
  func nonObjectValuesAreRefused() throws {
    let result = try exportOfReadings("jsonl-not-object") { store in
      try store.put(Data("[1, 2]".utf8), forKey: "readings\u{0}r7")
    }
    #expect(result.status == 1)
    #expect(
      result.err.hasPrefix("Error: collection 'readings' holds a value that is not a JSON object"), "\(result.err)")
    #expect(!result.err.contains("r7"))
  }

  @Test(
    "get --json prints an object of either coder as the JSON text an export writes, and refuses other values",
    arguments: ["binary", "json"])
  func getJSONPrintsTheObjectAsJSONText(coderName: String) throws {
    let coder: any CaskCoder = coderName == "json" ? JSONCaskCoder() : BinaryCaskCoder()
    let cask = try CaskRunner("get-json-\(coderName)")
    defer { cask.remove() }
    let original = Self.sample(3)
    do {
      let store = try CaskStore(path: cask.path("a"), password: password, options: .init(durability: .never))
      try Self.readings(in: store, coder: coder).save(original)
      try store.put(Data("plain text".utf8), forKey: "note")
      try store.close()
    }
    do {
      // A damaged object, which no write through the indexed collection could store.
      let store = try CaskStore(path: cask.path("a"), password: password, options: .init(durability: .never))
      try plantUnchecked(Data([0xC1, 0xFF, 0x00]), forKey: "readings\u{0}damaged", in: store)
      try store.close()
    }
    let result = try cask.run(["get", "a", "r3", "--collection", "readings", "--json"], password: password)
    #expect(result.status == 0, "\(result.err)")
    #expect(result.stdout.last == 0x0A)
    // A JSON object is printed as stored, so its own coder reads it; a binary object's JSON
    // text has dates as seconds since 2001 and data in base64, JSONDecoder's defaults.
    let printed =
      coderName == "json"
      ? try JSONCaskCoder().decode(Reading.self, from: result.stdout)
      : try JSONDecoder().decode(Reading.self, from: result.stdout)
    #expect(printed == original)
    let plain = try cask.run(["get", "a", "note", "--json"], password: password)
    #expect(plain.status == 1)
    #expect(plain.err == "Error: the value is not an object (neither a JSON object nor a binary one); omit --json\n")
    #expect(try cask.run(["get", "a", "note"], password: password).out == "plain text")
    let damaged = try cask.run(["get", "a", "damaged", "--collection", "readings", "--json"], password: password)
    #expect(damaged.status == 1)
    #expect(damaged.err == "Error: the value holds a damaged binary object\n")
  }

  @Test("without --batch-size an import is one atomic batch: a bad last line writes nothing")
  func importIsOneBatchByDefault() throws {
    let cask = try CaskRunner("jsonl-one-batch")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    let lines = (1...2500).map { #"{"id": "\#($0)"}"# } + [#"{"id": }"#]
    let result = try cask.run(
      ["import", "s", "-", "--collection", "c", "--id-key", "id"], password: password,
      stdin: Data(lines.joined(separator: "\n").utf8))
    #expect(result.status == 1)
    #expect(result.err == "Error: invalid import at line 2501 of standard input: malformed JSON; nothing was written\n")
    #expect(try cask.run(["keys", "s", "--collection", "c"], password: password).out == "")
  }
}

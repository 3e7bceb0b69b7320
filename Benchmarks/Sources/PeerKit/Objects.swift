import Foundation

/// The `objects` workload's model: ten fields of the kinds an app stores (text, numbers,
/// a date, a flag, a list), about 300 bytes as JSON.
public struct BenchObject: Codable, Identifiable, Sendable, Equatable {
  public var id: String
  public var name: String
  public var email: String
  public var age: Int
  public var balance: Double
  public var isActive: Bool
  public var createdAt: Date
  public var tags: [String]
  public var score: Int
  public var notes: String

  /// The `index`th object of a seeded sequence.
  public static func make(_ index: Int, using generator: inout SeededGenerator) -> BenchObject {
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    func word() -> String { words[Int.random(in: 0..<words.count, using: &generator)] }
    return BenchObject(
      id: String(format: "%08x", index) + String(generator.next() % 0xFFFF_FFFF, radix: 16),
      name: "\(word().capitalized) \(word().capitalized)",
      email: "\(word()).\(index)@example.com",
      age: Int.random(in: 18...90, using: &generator),
      balance: Double(Int.random(in: 0...10_000_000, using: &generator)) / 100,
      isActive: Bool.random(using: &generator),
      createdAt: Date(timeIntervalSince1970: Double(Int.random(in: 1_500_000_000...1_800_000_000, using: &generator))),
      tags: (0..<Int.random(in: 1...4, using: &generator)).map { _ in word() },
      score: Int.random(in: 0...1000, using: &generator),
      notes: (0..<12).map { _ in word() }.joined(separator: " "))
  }

  /// The predicate of the `filter` workload: about a third of the objects match.
  @Sendable public static func isSelected(_ object: BenchObject) -> Bool {
    object.isActive && object.age >= 50
  }
}

/// A collection of `BenchObject`s, as the `objects` workload sees it.
public protocol ObjectStore: AnyObject {
  /// Inserts or replaces one object, or `objects`, in one transaction.
  func save(_ object: BenchObject) throws
  func save(contentsOf objects: ArraySlice<BenchObject>) throws
  func get(id: String) throws -> BenchObject?
  func all() throws -> [BenchObject]
  func filter(_ isIncluded: (BenchObject) throws -> Bool) throws -> [BenchObject]
  func close() throws
}

public protocol ObjectStoreOpener: PeerOpener {
  func open(directory: String, durability: Durability) throws -> any ObjectStore
}

/// The JSON every object store writes: the same settings as CipherCask's `JSONCaskCoder`
/// (ISO 8601 dates).
public enum ObjectJSON {
  public static func encoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    return encoder
  }

  public static func decoder() -> JSONDecoder {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return decoder
  }
}

/// Runs the `objects` workloads: `save` (a transaction each) into a fresh store, `get` (every
/// object, random order), `all` and `filter` (`allCalls` calls over the whole collection), then
/// `save-batch` (`batchSize` to a transaction, into a second fresh store); an operation is one
/// object.
public struct ObjectRunner {
  static let allCalls = 3
  static let batchSize = 1_000

  public static func run(
    opener: any ObjectStoreOpener, request: PeerRequest, progress: (String) -> Void
  ) throws -> PeerReport {
    var generator = SeededGenerator(seed: request.seed)
    let objects = (0..<request.size).map { BenchObject.make($0, using: &generator) }
    let expected = objects.filter(BenchObject.isSelected).count
    let harnessRSS = ProcessFigures.currentRSS()
    var recorder = Recorder(capacity: request.size)
    for run in 1...Swift.max(1, request.runs) {
      progress("\(opener.name): objects run \(run) of \(request.runs), \(request.size) objects")
      let path = try request.freshDirectory("objects")
      let store = try opener.open(directory: path, durability: request.durability)
      try recorder.timeEach("save", count: objects.count, note: "one save per transaction") { index in
        try store.save(objects[index])
      }
      var order = SeededGenerator(seed: request.seed &+ UInt64(run))
      let shuffled = objects.indices.shuffled(using: &order)
      try recorder.timeEach("get", count: objects.count) { index in
        let object = objects[shuffled[index]]
        guard try store.get(id: object.id) == object else { throw PeerError("get: an object came back different") }
      }
      if request.saveAndGetOnly ?? false {
        try store.close()
        try FileManager.default.removeItem(atPath: path)
        continue
      }
      // One group a call over the whole collection: a sample is one object's share of a call.
      let whole = "\(allCalls) calls over the whole collection; an operation is one object"
      try recorder.timeGroups("all", count: allCalls * objects.count, groupSize: objects.count, note: whole) { _ in
        let all = try store.all()
        guard all.count == objects.count else { throw PeerError("all: \(all.count) of \(objects.count) objects") }
      }
      try recorder.timeGroups("filter", count: allCalls * objects.count, groupSize: objects.count, note: whole) { _ in
        let selected = try store.filter(BenchObject.isSelected)
        guard selected.count == expected else { throw PeerError("filter: \(selected.count), not \(expected)") }
      }
      try store.close()
      // `save(contentsOf:)` into a second fresh store; a sample is one object's share of its transaction.
      let batches = try opener.open(directory: try request.freshDirectory("objects"), durability: request.durability)
      try recorder.timeGroups(
        "save-batch", count: objects.count, groupSize: batchSize,
        note: "\(batchSize) objects a transaction; an operation is one object"
      ) { range in try batches.save(contentsOf: objects[range]) }
      guard let last = objects.last, try batches.get(id: last.id) == last else {
        throw PeerError("save-batch: the last object did not come back")
      }
      try batches.close()
      try FileManager.default.removeItem(atPath: path)
    }
    return PeerReport(
      engine: opener.name, setup: opener.setup, mode: "objects", keys: request.size,
      durability: request.durability, runs: request.runs, workloads: recorder.figures,
      peakRSSBytes: ProcessFigures.peakRSS(), harnessRSSBytes: harnessRSS)
  }
}

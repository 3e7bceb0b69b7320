import CipherCask
import Foundation
import PeerKit

/// `cask-bench coders`: a collection's `CaskCoder` on its own, outside any store: encode and
/// decode of a 10-field struct with `BinaryCaskCoder` (the default), `JSONCaskCoder`,
/// `PropertyListCaskCoder` and JSON with plain `.iso8601` dates (which drop fractions of a
/// second), the bytes each writes, and whether each reads old objects after the model gains an
/// optional field or loses one. Rates are per second of the thread's CPU time, which moves far
/// less than wall time on a shared machine (wall-clock rates are in the JSON).
enum CodersCommand: BenchCommand {
  static let name = "coders"
  static let abstract =
    "CaskCoder choice: encode and decode of a 10-field struct, binary beside JSON and property lists."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "3 runs of ~0.1 s instead of 7 of ~0.5 s: a few seconds, with more noise."),
    ResultsDestination.option,
  ]

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    try options.measure { results, _ in try results.write(measure(quick ? .quick : .full)) }
  }

  /// The `objects` workload's model, with a date that has a fraction of a second (which a coder
  /// must keep to round-trip exactly).
  static func sample(_ index: Int, using generator: inout SeededGenerator) -> BenchObject {
    var object = BenchObject.make(index, using: &generator)
    object.createdAt = Date(timeIntervalSinceReferenceDate: Double.random(in: 5e8...8e8, using: &generator))
    return object
  }

  /// The next version of `BenchObject`: one field added as optional.
  struct SampleAddedOptional: Codable {
    var id: String
    var name: String
    var email: String
    var age: Int
    var balance: Double
    var isActive: Bool
    var createdAt: Date
    var tags: [String]
    var score: Int
    var notes: String
    var nickname: String?
  }

  /// `BenchObject` without `notes`.
  struct SampleRemovedField: Codable {
    var id: String
    var name: String
    var email: String
    var age: Int
    var balance: Double
    var isActive: Bool
    var createdAt: Date
    var tags: [String]
    var score: Int
  }

  struct Settings: Codable {
    let quick: Bool
    let runs: Int
    let secondsPerRun: Double
    /// Distinct samples cycled through (one operation is one object).
    let samples: Int

    static let quick = Settings(quick: true, runs: 3, secondsPerRun: 0.1, samples: 1_000)
    static let full = Settings(quick: false, runs: 7, secondsPerRun: 0.5, samples: 1_000)
  }

  struct CoderFigures: Codable {
    let coder: String
    let isDefault: Bool
    /// Median objects a second of thread CPU time; per workload, the CPU seconds of each run and
    /// the median objects a second of wall-clock time.
    let encodePerSecond: Double
    let decodePerSecond: Double
    let roundTripPerSecond: Double
    let runs: [String: Runs]
    let wallClockPerSecond: [String: Double]
    /// Mean encoded size; every sample decodes equal to itself (dates to the bit); old objects
    /// decode as the model with an added optional field (as nil) and with a field removed.
    let meanBytes: Double
    let roundTripsExactly: Bool
    let readsOldAfterOptionalFieldAdded: Bool
    let readsOldAfterFieldRemoved: Bool
  }

  struct Report: Codable {
    let settings: Settings
    let coders: [CoderFigures]
  }

  static func measure(_ settings: Settings) throws -> Report {
    var generator = SeededGenerator(seed: 0xC0DE)
    let samples = (0..<settings.samples).map { sample($0, using: &generator) }
    let coders: [(name: String, coder: any CaskCoder, isDefault: Bool)] = [
      ("BinaryCaskCoder", BinaryCaskCoder(), true), ("JSONCaskCoder", JSONCaskCoder(), false),
      ("PropertyListCaskCoder (binary)", PropertyListCaskCoder(), false),
      ("JSON, plain .iso8601 dates (reference)", PlainISO8601JSONCoder(), false),
    ]
    let sink = Sink()
    var workloads: [Workload] = []
    var checks: [(bytes: Double, exact: Bool, added: Bool, removed: Bool)] = []
    for (name, coder, _) in coders {
      let encoded = try samples.map { try coder.encode($0) }
      checks.append(try compatibility(coder, samples: samples, encoded: encoded))
      workloads.append(
        Workload(name: "\(name) encode") { count in
          for index in 0..<count { sink.bytes &+= try coder.encode(samples[index % samples.count]).count }
        })
      workloads.append(
        Workload(name: "\(name) decode") { count in
          for index in 0..<count {
            sink.bytes &+= try coder.decode(BenchObject.self, from: encoded[index % encoded.count]).age
          }
        })
      workloads.append(
        Workload(name: "\(name) encode+decode") { count in
          for index in 0..<count {
            let data = try coder.encode(samples[index % samples.count])
            sink.bytes &+= try coder.decode(BenchObject.self, from: data).age
          }
        })
    }
    let (wall, runs) = try Timing.interleavedRuns(
      workloads, runs: settings.runs, secondsPerRun: settings.secondsPerRun,
      progress: { printToStandardError("coders: \($0)") })
    let figures = coders.enumerated().map { index, coder in
      let own = Array(runs[(index * 3)..<(index * 3 + 3)])
      let ownWall = Array(wall[(index * 3)..<(index * 3 + 3)])
      return CoderFigures(
        coder: coder.name, isDefault: coder.isDefault, encodePerSecond: own[0].medianRate,
        decodePerSecond: own[1].medianRate, roundTripPerSecond: own[2].medianRate,
        runs: ["encode": own[0], "decode": own[1], "encode+decode": own[2]],
        wallClockPerSecond: [
          "encode": ownWall[0].medianRate, "decode": ownWall[1].medianRate, "encode+decode": ownWall[2].medianRate,
        ],
        meanBytes: checks[index].bytes,
        roundTripsExactly: checks[index].exact, readsOldAfterOptionalFieldAdded: checks[index].added,
        readsOldAfterFieldRemoved: checks[index].removed)
    }
    return Report(settings: settings, coders: figures)
  }

  /// Size and the three readability checks of one coder over every sample.
  static func compatibility(
    _ coder: any CaskCoder, samples: [BenchObject], encoded: [Data]
  ) throws -> (bytes: Double, exact: Bool, added: Bool, removed: Bool) {
    var exact = true
    var added = true
    var removed = true
    for (sample, data) in zip(samples, encoded) {
      exact = exact && (try? coder.decode(BenchObject.self, from: data)) == sample
      if let newer = try? coder.decode(SampleAddedOptional.self, from: data) {
        added = added && newer.nickname == nil && newer.id == sample.id && newer.notes == sample.notes
      } else {
        added = false
      }
      removed = removed && (try? coder.decode(SampleRemovedField.self, from: data))?.score == sample.score
    }
    let bytes = Double(encoded.reduce(0) { $0 + $1.count }) / Double(max(1, encoded.count))
    return (bytes, exact, added, removed)
  }
}

/// JSON with JSONEncoder's plain `.iso8601` dates, which drop fractions of a second: for reference.
struct PlainISO8601JSONCoder: CaskCoder {
  func encode<T: Encodable>(_ value: T) throws -> Data {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    return try encoder.encode(value)
  }

  func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try decoder.decode(type, from: data)
  }
}

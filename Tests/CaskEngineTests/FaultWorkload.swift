import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Random store operations for the fault tests, with a plain `Dictionary` model to check
/// them against. Every value written is unique (it starts with `v<serial>:`), so a value read
/// back names the write it came from, and a value that was never written cannot pass.
enum FaultWorkload {
  /// One step of a workload.
  enum Step {
    case put(key: String, value: Data)
    case delete(key: String)
    case batch([BatchOperation])
    case sync
    case compact
    case reopen
  }

  enum BatchOperation {
    case put(key: String, value: Data)
    case delete(key: String)
  }

  /// Where the stores of these tests live on a `FaultyFileSystem`.
  static let directory = "/data"
  static let path = "/data/store.cask"
  static let password = "fault-tests"
  static let keys = (0..<20).map { "key-\($0)" }

  static func options(
    _ fileSystem: FaultyFileSystem, durability: CaskStore.Durability = .always, segmentSizeLimit: UInt64 = 2048
  ) -> CaskStore.Options {
    var options = CaskStore.Options(
      durability: durability, segmentSizeLimit: segmentSizeLimit, autoCompaction: nil, fileSystem: fileSystem)
    options.keyDerivation = testKeyDerivation
    return options
  }

  static func open(_ options: CaskStore.Options, password: String = password) throws -> CaskStore {
    try CaskStore(path: path, password: password, options: options)
  }

  /// A fresh value: `v<serial>:` and up to `maximumPadding` random bytes.
  static func value(serial: inout Int, random: inout SeededRandom, maximumPadding: Int = 300) -> Data {
    serial += 1
    var value = Data("v\(serial):".utf8)
    value.append(random.bytes(Int.random(in: 0...maximumPadding, using: &random)))
    return value
  }

  /// A random step; `sync`, `compact` and `reopen` only when asked for.
  static func step(
    random: inout SeededRandom, serial: inout Int, keys: [String] = keys, syncs: Bool = false,
    maintenance: Bool = true
  ) -> Step {
    let key = keys[Int.random(in: 0..<keys.count, using: &random)]
    let roll = Int.random(in: 0..<100, using: &random)
    switch roll {
    case 0..<50:
      return .put(key: key, value: value(serial: &serial, random: &random))
    case 50..<65:
      return .delete(key: key)
    case 65..<88:
      var operations: [BatchOperation] = []
      // Now and then a batch larger than a segment, which gets a segment of its own.
      let count = Int.random(in: 0..<10, using: &random) == 0 ? 12 : Int.random(in: 2...5, using: &random)
      for _ in 0..<count {
        let batchKey = keys[Int.random(in: 0..<keys.count, using: &random)]
        if Int.random(in: 0..<4, using: &random) == 0 {
          operations.append(.delete(key: batchKey))
        } else {
          operations.append(.put(key: batchKey, value: value(serial: &serial, random: &random)))
        }
      }
      return .batch(operations)
    case 88..<95 where syncs:
      return .sync
    case 95..<98 where maintenance:
      return .compact
    case 98..<100 where maintenance:
      return .reopen
    default:
      return .put(key: key, value: value(serial: &serial, random: &random))
    }
  }

  /// The model after `step`.
  static func applying(_ step: Step, to model: [String: Data]) -> [String: Data] {
    var model = model
    switch step {
    case .put(let key, let value):
      model[key] = value
    case .delete(let key):
      model[key] = nil
    case .batch(let operations):
      for operation in operations {
        switch operation {
        case .put(let key, let value): model[key] = value
        case .delete(let key): model[key] = nil
        }
      }
    case .sync, .compact, .reopen:
      break
    }
    return model
  }

  /// Runs `step` on `store`; `reopen` closes it and opens a new one with `options`.
  static func run(_ step: Step, on store: inout CaskStore, options: CaskStore.Options) throws {
    switch step {
    case .put(let key, let value):
      try store.put(value, forKey: key)
    case .delete(let key):
      try store.delete(key)
    case .batch(let operations):
      try store.batch { batch in
        for operation in operations {
          switch operation {
          case .put(let key, let value): try batch.put(value, forKey: key)
          case .delete(let key): try batch.delete(key)
          }
        }
      }
    case .sync:
      try store.sync()
    case .compact:
      try store.compact()
    case .reopen:
      try store.close()
      store = try open(options)
    }
  }

  /// Everything the store holds, read through `keys()` and `get`; also checks that every key
  /// of the workload that `keys()` leaves out reads as absent.
  static func contents(of store: CaskStore) throws -> [String: Data] {
    var contents: [String: Data] = [:]
    for key in try store.keys() {
      contents[key] = try store.get(key)
    }
    for key in keys where contents[key] == nil {
      #expect(try store.get(key) == nil, "\(key) is not listed by keys() but get returns a value")
    }
    #expect(store.count == contents.count)
    return contents
  }

  /// Records an issue unless `actual` is one of `candidates`.
  ///
  /// - Returns: the candidate it matched.
  @discardableResult
  static func expect(
    _ actual: [String: Data], isOneOf candidates: [[String: Data]], _ context: String,
    fileSystem: FaultyFileSystem? = nil, sourceLocation: SourceLocation = #_sourceLocation
  ) -> Int? {
    if let index = candidates.firstIndex(of: actual) { return index }
    let expected = candidates.last ?? [:]
    var lines: [String] = []
    if let fileSystem {
      let names = (try? fileSystem.contentsOfDirectory(path)) ?? []
      let sizes = names.map { "\($0) (\(fileSystem.contents(of: "\(path)/\($0)")?.count ?? 0) bytes)" }
      lines.append("files: " + sizes.joined(separator: ", "))
    }
    for key in Set(actual.keys).union(expected.keys).sorted() where actual[key] != expected[key] {
      lines.append("\(key): store has \(describe(actual[key])), last candidate has \(describe(expected[key]))")
    }
    let summary = "\(context): the store matches none of \(candidates.count) acceptable states; against the last one:"
    Issue.record(Comment(rawValue: ([summary] + lines).joined(separator: "\n")), sourceLocation: sourceLocation)
    return nil
  }

  /// `v<serial>` of a value, or "nothing".
  static func describe(_ value: Data?) -> String {
    guard let value else { return "nothing" }
    guard let colon = value.firstIndex(of: UInt8(ascii: ":")) else { return "a value that was never written" }
    return String(decoding: value[value.startIndex..<colon], as: UTF8.self) + " (\(value.count) bytes)"
  }

  /// A store on a fresh faulty disk after a random workload (with compactions and reopens), and
  /// its model; the store stays open.
  static func prepared(
    _ random: inout SeededRandom, steps: ClosedRange<Int> = 30...60, readOnly: Bool = false
  ) throws -> (FaultyFileSystem, CaskStore, [String: Data]) {
    let fileSystem = FaultyFileSystem(directories: [directory])
    let options = options(fileSystem, durability: .never)
    var store = try open(options)
    var model: [String: Data] = [:]
    var serial = 0
    for _ in 0..<Int.random(in: steps, using: &random) {
      let step = step(random: &random, serial: &serial)
      try run(step, on: &store, options: options)
      model = applying(step, to: model)
    }
    if readOnly {
      try store.close()
      var readOnlyOptions = options
      readOnlyOptions.readOnly = true
      store = try open(readOnlyOptions)
    }
    return (fileSystem, store, model)
  }
}

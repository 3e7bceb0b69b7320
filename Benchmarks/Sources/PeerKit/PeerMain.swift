import Foundation

/// The command line every `peer-*` executable shares; `cask-bench peers` and `cask-bench
/// objects` run them and decode the `PeerReport` JSON each prints on standard output.
///
/// ```
/// peer-lmdb kv --engine lmdb+rncryptor --keys 10000 --runs 5 --dir /tmp/x --seed 42 --durability never
/// peer-lmdb durable --engine lmdb --puts1 300 --puts8 800 --runs 5 --dir /tmp/x --seed 42
/// peer-sqlite objects --engine sqlite+rncryptor --objects 10000 --runs 5 --dir /tmp/x --seed 42
/// peer-sqlcipher queries --engine sqlcipher --events 100000 --runs 50 --dir /tmp/x --seed 42
/// peer-lmdb list
/// ```
///
/// Progress goes to standard error. Exit 0 on success, 1 when a workload fails, 64 on a usage
/// error.
public enum PeerMain {
  /// Parses `CommandLine.arguments`, runs, prints, and exits.
  ///
  /// - Parameter peers: every engine this executable has, of any kind.
  public static func run(_ peers: [any PeerOpener]) -> Never {
    do {
      print(try run(arguments: Array(CommandLine.arguments.dropFirst()), peers: peers))
      exit(0)
    } catch let error as PeerUsageError {
      printError("Error: \(error.description)")
      printError("Usage: peer-* (kv|durable|objects|queries|list) --engine NAME [options]")
      exit(64)
    } catch {
      printError("Error: \(error)")
      exit(1)
    }
  }

  /// The engine named `name` of the kind `type` (a key-value, object or event store opener).
  ///
  /// - Throws: `PeerUsageError` when this executable has none.
  static func opener<Opener>(_ name: String, _ peers: [any PeerOpener], as type: Opener.Type) throws -> Opener {
    guard let opener = peers.first(where: { $0.name == name && $0 is Opener }) as? Opener else {
      throw PeerUsageError("no engine '\(name)' of that kind here; see 'list'")
    }
    return opener
  }

  static func run(arguments: [String], peers: [any PeerOpener]) throws -> String {
    guard let mode = arguments.first else { throw PeerUsageError("missing mode") }
    if mode == "list" {
      return peers.map { peer in
        let kind = peer is any StoreOpener ? "kv" : peer is any ObjectStoreOpener ? "objects" : "queries"
        return kind + " " + peer.name
      }.joined(separator: "\n")
    }
    var options = try PeerOptions(Array(arguments.dropFirst()))
    let engine = try options.string("--engine")
    let runs = try options.integer("--runs", default: 5)
    let directory = try options.string("--dir")
    let seed = UInt64(try options.integer("--seed", default: 42))
    let durability = try options.durability()
    let report: PeerReport
    switch mode {
    case "kv", "durable":
      let opener = try opener(engine, peers, as: (any StoreOpener).self)
      let keys = try options.integer("--keys", default: 10_000)
      let workloads = try options.list("--workloads") ?? KVWorkload.all
      var settings = KVSettings(
        keys: keys, runs: runs, workloads: Set(workloads), durability: durability, directory: directory, seed: seed)
      if let reads = try options.optionalInteger("--rww-reads") { settings.readWhileWritingReads = reads }
      if let rate = try options.optionalCount("--rww-rate") { settings.readWhileWritingRate = rate }
      if let writes = try options.optionalInteger("--write-ops") { settings.writeOperations = Swift.min(writes, keys) }
      if mode == "durable" {
        settings.durablePuts = [
          1: try options.integer("--puts1", default: 300), 8: try options.integer("--puts8", default: 800),
        ]
        try options.finish()
        report = try KVRunner.durable(opener: opener, settings: settings, progress: printError)
      } else {
        try options.finish()
        var runner = KVRunner(opener: opener, settings: settings)
        report = try runner.run(progress: printError)
      }
    case "objects":
      let opener = try opener(engine, peers, as: (any ObjectStoreOpener).self)
      var settings = ObjectRunner.Settings(
        objects: try options.integer("--objects", default: 10_000), runs: runs, durability: durability,
        directory: directory, seed: seed)
      settings.saveAndGetOnly = options.flag("--save-get-only")
      try options.finish()
      report = try ObjectRunner.run(opener: opener, settings: settings, progress: printError)
    case "queries":
      let opener = try opener(engine, peers, as: (any EventStoreOpener).self)
      let settings = EventQueryRunner.Settings(
        events: try options.integer("--events", default: 100_000), runs: runs, directory: directory, seed: seed)
      try options.finish()
      report = try EventQueryRunner.run(opener: opener, settings: settings, progress: printError)
    default:
      throw PeerUsageError("unknown mode '\(mode)'")
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: try encoder.encode(report), as: UTF8.self)
  }

  static func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }
}

struct PeerUsageError: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }
}

/// `--name value` options, each consumed once; anything left over is an error.
struct PeerOptions {
  private var values: [String: String] = [:]
  private var flags: Set<String> = []

  init(_ arguments: [String]) throws {
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      guard argument.hasPrefix("--") else { throw PeerUsageError("unexpected argument '\(argument)'") }
      if index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") {
        values[argument] = arguments[index + 1]
        index += 2
      } else {
        flags.insert(argument)
        index += 1
      }
    }
  }

  mutating func string(_ name: String) throws -> String {
    guard let value = values.removeValue(forKey: name) else { throw PeerUsageError("missing '\(name)'") }
    return value
  }

  mutating func optionalInteger(_ name: String) throws -> Int? {
    guard let text = values.removeValue(forKey: name) else { return nil }
    guard let value = Int(text), value > 0 else { throw PeerUsageError("'\(name)' needs a positive whole number") }
    return value
  }

  /// A whole number that may be 0 (`--rww-rate 0`: unpaced).
  mutating func optionalCount(_ name: String) throws -> Int? {
    guard let text = values.removeValue(forKey: name) else { return nil }
    guard let value = Int(text), value >= 0 else { throw PeerUsageError("'\(name)' needs a whole number, 0 or more") }
    return value
  }

  mutating func integer(_ name: String, default fallback: Int) throws -> Int {
    try optionalInteger(name) ?? fallback
  }

  mutating func list(_ name: String) throws -> [String]? {
    values.removeValue(forKey: name).map { $0.split(separator: ",").map(String.init) }
  }

  mutating func durability() throws -> Durability {
    guard let text = values.removeValue(forKey: "--durability") else { return .never }
    guard let value = Durability(rawValue: text) else { throw PeerUsageError("'--durability' is never or always") }
    return value
  }

  mutating func flag(_ name: String) -> Bool {
    flags.remove(name) != nil
  }

  func finish() throws {
    if let name = values.keys.sorted().first ?? flags.sorted().first {
      throw PeerUsageError("unknown option '\(name)'")
    }
  }
}

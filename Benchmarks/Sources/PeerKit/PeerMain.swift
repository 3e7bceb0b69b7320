import Foundation

/// What every `peer-*` executable runs: given a `PeerRequest`, prints the `PeerReport`; given
/// `list`, the kind and name of each engine it has. Progress goes to standard error; exit 0,
/// 1 when a workload fails, 64 on a usage error.
public enum PeerMain {
  public static func run(_ peers: [any PeerOpener]) -> Never {
    do {
      print(try run(arguments: Array(CommandLine.arguments.dropFirst()), peers: peers))
      exit(0)
    } catch let error as PeerUsageError {
      printError("Error: \(error.description)")
      printError("Usage: peer-* (list | REQUEST), REQUEST a PeerRequest in JSON")
      exit(64)
    } catch {
      printError("Error: \(error)")
      exit(1)
    }
  }

  /// The engine named `name` of the kind `type` (a key-value, object or event store opener).
  static func opener<Opener>(_ name: String, _ peers: [any PeerOpener], as type: Opener.Type) throws -> Opener {
    guard let opener = peers.first(where: { $0.name == name && $0 is Opener }) as? Opener else {
      throw PeerUsageError("no engine '\(name)' of that kind here; see 'list'")
    }
    return opener
  }

  static func run(arguments: [String], peers: [any PeerOpener]) throws -> String {
    guard arguments.count == 1, let argument = arguments.first else {
      throw PeerUsageError("expected one argument, 'list' or a request")
    }
    if argument == "list" {
      return peers.map { peer in
        let kind = peer is any StoreOpener ? "kv" : peer is any ObjectStoreOpener ? "objects" : "queries"
        return kind + " " + peer.name
      }.joined(separator: "\n")
    }
    let request: PeerRequest
    do {
      request = try JSONDecoder().decode(PeerRequest.self, from: Data(argument.utf8))
    } catch {
      throw PeerUsageError("the argument is not a request: \(error)")
    }
    guard request.size > 0, request.runs > 0 else { throw PeerUsageError("a request needs a size and runs above 0") }
    let report: PeerReport
    switch request.mode {
    case .kv, .durable:
      let opener = try opener(request.engine, peers, as: (any StoreOpener).self)
      if request.mode == .durable {
        report = try KVRunner.durable(opener: opener, request: request, progress: printError)
      } else {
        var runner = KVRunner(opener: opener, request: request)
        report = try runner.run(progress: printError)
      }
    case .objects:
      let opener = try opener(request.engine, peers, as: (any ObjectStoreOpener).self)
      report = try ObjectRunner.run(opener: opener, request: request, progress: printError)
    case .queries:
      let opener = try opener(request.engine, peers, as: (any EventStoreOpener).self)
      report = try EventQueryRunner.run(opener: opener, request: request, progress: printError)
    }
    return try json(report)
  }

  /// `value` as one line of JSON with sorted keys.
  public static func json<Value: Encodable>(_ value: Value) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
  }

  static func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
  }
}

/// A command line (or request) that cannot be understood: exit 64.
public struct PeerUsageError: Error, CustomStringConvertible {
  public let description: String

  public init(_ description: String) {
    self.description = description
  }
}

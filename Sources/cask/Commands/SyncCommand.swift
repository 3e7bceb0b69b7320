import CaskCLIKit
import CipherCask
import CipherCaskSync
import Foundation
import Synchronization

/// `cask sync STORE URL --bucket B --collection NAME --auth-file F`: pulls a Kinto
/// collection's changes and sends the local ones (CipherCaskSync's `CaskSync`).
enum SyncCommand: Subcommand {
  static var spec: CommandSpec { .sync }

  static func run(_ arguments: ParsedArguments) throws {
    let path = arguments.argument("store")
    let text = arguments.argument("url")
    guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
      url.host != nil
    else {
      throw CLIError.usage("<url> must be an http:// or https:// URL (the Kinto server's /v1 root)", spec)
    }
    let collection = arguments.requiredOption("collection")
    let bucket = arguments.requiredOption("bucket")
    let remote = arguments.option("remote-collection") ?? collection
    let (user, password) = try credentials(in: arguments.requiredOption("auth-file"))
    var server = KintoServer(url: url, user: user, password: password)
    server.allowsInsecureHTTP = arguments.flag("allow-insecure-http")
    let policy: SyncConflictPolicy =
      switch arguments.option("conflicts") {
      case "server-wins": .serverWins
      case "client-wins": .clientWins
      default: .manual
      }
    let place = RemoteFetch.display(url)
    let outcome = try StoreAccess.withStore(path, arguments, mode: .readWrite) { store in
      let documents = store.collection(JSONDocument.self, named: collection, coder: JSONCaskCoder())
      let sync: CaskSync<JSONDocument>
      do {
        sync = try CaskSync(documents, server: server, bucket: bucket, collection: remote)
      } catch let error as SyncError {
        throw CLIError.usage(MessageText.escaped(error.description), spec)
      }
      return try wait(for: sync, policy: policy, place: place)
    }
    if arguments.flag("json") {
      return try JSONOutput.write(
        Report(
          store: path, collection: collection, server: place, bucket: bucket, remoteCollection: remote,
          pulled: outcome.report.pulled, deleted: outcome.report.deleted, pushed: outcome.report.pushed,
          conflicts: outcome.report.conflicts.count, pending: outcome.pending, fullResync: outcome.report.fullResync,
          requests: outcome.report.requests))
    }
    var line =
      "Synced collection '\(MessageText.escaped(collection))' of store '\(path)' with '\(place)': "
      + "\(outcome.report.pulled) pulled, \(outcome.report.deleted) deleted, \(outcome.report.pushed) pushed"
    if !outcome.report.conflicts.isEmpty {
      line += ", \(counted(outcome.report.conflicts.count, "conflict"))"
      if policy == .manual { line += " kept (run again with --conflicts server-wins or client-wins to settle)" }
    }
    StandardStream.output.write(line + ".\n")
  }

  struct Report: Encodable {
    var store: String
    var collection: String
    var server: String
    var bucket: String
    var remoteCollection: String
    var pulled: Int
    var deleted: Int
    var pushed: Int
    var conflicts: Int
    var pending: Int
    var fullResync: Bool
    var requests: Int
  }

  /// The user and password on the first line of `file`, `user:password`.
  private static func credentials(in file: String) throws -> (String, String) {
    guard let data = FileManager.default.contents(atPath: file) else {
      throw CLIError.failure("cannot read the auth file '\(MessageText.escaped(file))'")
    }
    let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    guard let colon = line.firstIndex(of: ":"), colon != line.startIndex, line.index(after: colon) != line.endIndex
    else {
      throw CLIError.failure(
        "the auth file '\(MessageText.escaped(file))' must hold 'user:password' on its first line")
    }
    return (String(line[..<colon]), String(line[line.index(after: colon)...]))
  }

  /// Runs the sync, blocking the calling thread.
  private static func wait(for sync: CaskSync<JSONDocument>, policy: SyncConflictPolicy, place: String) throws
    -> (report: SyncReport<JSONDocument>, pending: Int)
  {
    let outcome = Mutex<Result<(SyncReport<JSONDocument>, Int), any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
      let result: Result<(SyncReport<JSONDocument>, Int), any Error>
      do {
        let report = try await sync.sync(conflicts: policy)
        result = .success((report, try await sync.pendingCount))
      } catch {
        result = .failure(error)
      }
      outcome.withLock { $0 = result }
      done.signal()
    }
    done.wait()
    switch outcome.withLock({ $0 }) {
    case .success(let value)?:
      return value
    case .failure(let error as SyncError)?:
      throw CLIError.failure(
        "cannot sync with '\(place)': \(MessageText.escaped(error.description)); what was stored stays, "
          + "and unsent changes wait for the next sync")
    case .failure(let error)?:
      throw error
    case nil:
      throw CLIError.failure("cannot sync with '\(place)': no outcome")
    }
  }
}

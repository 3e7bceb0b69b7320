import CipherCask
import CipherCaskSync
import Foundation
import PeerKit

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// `cask-bench outbox`: a backlog of n changes (n/2 objects saved twice, queued "offline"): the n
/// `saveAndQueue` calls, then one `pushPending` to the tests' REST server on 127.0.0.1. Wall and
/// this process's CPU time: the CPU time leaves the server's work out.
enum OutboxCommand: BenchCommand {
  static let name = "outbox"
  static let abstract = "CipherCaskSync's outbox: queueing and pushing backlogs of 1,000 and 10,000 changes."
  static let options: [(flag: String, help: String)] = [
    ("--quick", "A backlog of 1,000 changes only."),
    ("--dir DIR", "Where the temporary stores go (default /tmp)."),
    ResultsDestination.option,
  ]

  /// A small object of the kind an app edits offline.
  struct Note: Codable, Identifiable, Sendable {
    var id: String
    var text: String
    var revision: Int
  }

  struct Figures: Codable {
    let backlog: Int
    let enqueueSeconds: Double
    let enqueueCPUSeconds: Double
    let pushSeconds: Double
    let pushCPUSeconds: Double
    /// Changes the push sent (less than `backlog` when it hit `pushLimit`).
    let sent: Int
    let complete: Bool
  }

  struct Report: Codable {
    let durability: String
    var backlogs: [Figures] = []
  }

  static func run(arguments: [String]) throws {
    var options = Options(arguments, of: Self.self)
    let quick = options.flag("--quick")
    try options.measure { results, scratch in
      let server = ResultsDestination.repository + "/Tests/CipherCaskSyncTests/Server/rest_server.py"
      guard FileManager.default.fileExists(atPath: server) else {
        throw BenchError("no REST server script at '\(server)'")
      }

      var report = Report(durability: "never")
      for backlog in quick ? [1_000] : [1_000, 10_000] {
        printToStandardError("outbox: a backlog of \(Number.grouped(backlog)) changes")
        let figures = try AsyncBridge.wait {
          try await measure(backlog: backlog, server: server, directory: scratch)
        }
        report.backlogs.append(figures)
      }
      try results.write(report)
    }
  }

  /// A push stops after this many seconds and reports how far it got (the server stops by
  /// itself after 600).
  static let pushLimit = 540.0

  static func measure(backlog: Int, server script: String, directory: String) async throws
    -> Figures
  {
    let path = "\(directory)/outbox-\(backlog)"
    let store = try CaskStore(path: path, password: "bench", options: .init(durability: .never))
    defer {
      try? store.close()
      try? FileManager.default.removeItem(atPath: path)
    }
    let configuration = RemoteConfiguration(
      envelope: .key("result"),
      prepareRequest: { $0.setValue("Bearer test-token", forHTTPHeaderField: "Authorization") })
    // Offline: nothing listens there, and nothing is sent while queueing.
    let offline = RemoteCollection(
      store.collection(Note.self), baseURL: URL(fileURLWithPath: "/offline"), configuration: configuration)
    let objects = backlog / 2
    let enqueueStart = (ProcessFigures.now(), CPUTime.process())
    for index in 0..<backlog {
      let note = Note(
        id: "n\(index % objects)", text: "note \(index % objects), edit \(index / objects)", revision: index)
      try await offline.saveAndQueue(note)
    }
    let enqueueSeconds = ProcessFigures.seconds(since: enqueueStart.0)
    let enqueueCPU = CPUTime.process() - enqueueStart.1
    guard offline.pendingCount == backlog else {
      throw BenchError("outbox: \(offline.pendingCount) of \(backlog) queued")
    }

    // Back online. (The server stops by itself after 10 minutes, so it starts only now.)
    let server = try RESTServer(script: script)
    defer { server.stop() }
    let sync = RemoteCollection(store.collection(Note.self), baseURL: server.url("users"), configuration: configuration)

    let sent = SentCounter()
    let pushStart = (ProcessFigures.now(), CPUTime.process())
    let push = Task { try await sync.pushPending(progress: { sent.set($0.objects) }) }
    let deadline = Task {
      try await Task.sleep(nanoseconds: UInt64(pushLimit * 1e9))
      push.cancel()
    }
    let complete: Bool
    do {
      complete = try await push.value == backlog
    } catch {
      guard push.isCancelled else { throw error }
      complete = false
    }
    deadline.cancel()
    let pushSeconds = ProcessFigures.seconds(since: pushStart.0)
    let pushCPU = CPUTime.process() - pushStart.1
    if complete, sync.pendingCount != 0 { throw BenchError("outbox: \(sync.pendingCount) changes left after the push") }
    return Figures(
      backlog: backlog, enqueueSeconds: enqueueSeconds, enqueueCPUSeconds: enqueueCPU, pushSeconds: pushSeconds,
      pushCPUSeconds: pushCPU, sent: sent.value, complete: complete)
  }
}

/// The tests' Python REST server on 127.0.0.1 and a free port; killed (SIGKILL) by `stop()`.
private final class RESTServer: @unchecked Sendable {
  private let process = Process()
  private let baseURL: URL

  init(script: String) throws {
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      line.append(chunk)
    }
    let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard let port = text.split(separator: " ").last.flatMap({ Int($0) }),
      let url = URL(string: "http://127.0.0.1:\(port)")
    else {
      kill(process.processIdentifier, SIGKILL)
      throw BenchError("the REST server did not say its port")
    }
    baseURL = url
  }

  func url(_ path: String) -> URL {
    baseURL.appendingPathComponent(path)
  }

  func stop() {
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}

private final class SentCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0

  var value: Int { lock.withLock { count } }
  func set(_ value: Int) { lock.withLock { count = value } }
}

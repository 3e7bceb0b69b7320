import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// The REST server of the HTTP tests (`Tests/CipherCaskSyncTests/Server/rest_server.py`) on
/// 127.0.0.1 and a free port, started for one test and killed after it: `/users` in a `result`
/// envelope with `next` links (two per page), `Authorization: Bearer test-token`,
/// `/status/<code>`, `/bad` (malformed JSON), `/echo` (a 400 that repeats the request's
/// headers), `/files/<name>` (what a PUT left, served as it was), `/log` (the changes it
/// applied), `/redirect/<code>?to=<URL>` and `/seen` (the `Authorization` headers it got). Used by the sync and the CLI tests; `cask-bench outbox`, in its own package,
/// starts the same script itself.
public final class RESTServer: @unchecked Sendable {
  public static let token = "test-token"
  public static let authorization = "Authorization: Bearer \(token)"

  private let process = Process()
  /// The server's standard input: it stops when this closes, so a server outlives neither its
  /// test process nor `stop()`, however long the run is held up.
  private let lifeline = Pipe()
  public let port: Int
  public let baseURL: URL

  public init() throws {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("CipherCaskSyncTests/Server/rest_server.py")
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path, "--until-stdin-closes"]
    process.standardInput = lifeline
    let output = Pipe()
    process.standardOutput = output
    // Handlers whose client went away (timeouts, cancellation) print tracebacks: not ours to show.
    process.standardError = FileHandle.nullDevice
    try process.run()
    // The first line is "PORT <n>".
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      line.append(chunk)
    }
    let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      throw RESTServerError(description: "the test server did not start: '\(text)'")
    }
    self.port = port
    baseURL = URL(string: "http://127.0.0.1:\(port)")!
  }

  deinit {
    stop()
  }

  /// Kills the server (SIGKILL: the test runner's children may inherit a blocked SIGTERM).
  public func stop() {
    try? lifeline.fileHandleForWriting.close()
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }

  /// The URL of `path` on the server.
  public func url(_ path: String) -> URL {
    URL(string: path, relativeTo: baseURL)!.absoluteURL
  }

  /// `http://127.0.0.1:<port><path>`, as a command line takes it.
  public func address(_ path: String) -> String {
    "http://127.0.0.1:\(port)\(path)"
  }

  /// A raw request, for checking what the server holds or changing it behind the client.
  public func request(_ method: String, _ path: String, json: Any? = nil) async throws -> (Int, Data) {
    var request = URLRequest(url: url(path))
    request.httpMethod = method
    request.setValue("Bearer \(Self.token)", forHTTPHeaderField: "Authorization")
    if let json {
      request.httpBody = try JSONSerialization.data(withJSONObject: json)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
  }

  /// The changes the server applied, in order: (method, id).
  public func log() async throws -> [String] {
    let (_, data) = try await request("GET", "/log")
    let entries = (try JSONSerialization.jsonObject(with: data) as? [[String: String]]) ?? []
    return entries.map { "\($0["method"] ?? "?") \($0["id"] ?? "?")" }
  }

  /// The `Authorization` header of every request the server has had (`nil` where none came),
  /// in order; asking does not add to it.
  public func authorizations() async throws -> [String?] {
    let (_, data) = try await request("GET", "/seen")
    return ((try JSONSerialization.jsonObject(with: data) as? [Any]) ?? []).map { $0 as? String }
  }

  /// Leaves `contents` at `/files/<name>`, to be served byte for byte.
  public func put(file name: String, _ contents: String) async throws {
    var request = URLRequest(url: url("/files/\(name)"))
    request.httpMethod = "PUT"
    request.setValue("Bearer \(Self.token)", forHTTPHeaderField: "Authorization")
    request.httpBody = Data(contents.utf8)
    let (_, response) = try await URLSession.shared.data(for: request)
    guard (response as? HTTPURLResponse)?.statusCode == 204 else {
      throw RESTServerError(description: "PUT /files/\(name) was not accepted")
    }
  }
}

public struct RESTServerError: Error, CustomStringConvertible {
  public var description: String
}

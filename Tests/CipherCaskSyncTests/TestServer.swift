import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The Python REST server in Server/rest_server.py, on 127.0.0.1 and a free port, started for
/// one test and stopped after it.
final class TestServer: @unchecked Sendable {
  let process = Process()
  let baseURL: URL
  static let token = "test-token"

  init() throws {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("Server/rest_server.py")
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path]
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
    let text = String(decoding: line, as: UTF8.self)
    guard
      let port = text.split(separator: " ").last.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
    else {
      process.terminate()
      throw TestServerError.noPort(text)
    }
    baseURL = URL(string: "http://127.0.0.1:\(port)")!
  }

  deinit {
    stop()
  }

  func stop() {
    if process.isRunning {
      // SIGKILL: the test runner's children may inherit a blocked SIGTERM.
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }

  func url(_ path: String) -> URL {
    URL(string: path, relativeTo: baseURL)!.absoluteURL
  }

  /// A raw request, for checking what the server holds or changing it behind the client.
  func request(_ method: String, _ path: String, json: Any? = nil) async throws -> (Int, Data) {
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
  func log() async throws -> [String] {
    let (_, data) = try await request("GET", "/log")
    let entries = (try JSONSerialization.jsonObject(with: data) as? [[String: String]]) ?? []
    return entries.map { "\($0["method"] ?? "?") \($0["id"] ?? "?")" }
  }
}

enum TestServerError: Error {
  case noPort(String)
}

import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// The REST server of CipherCaskSync's tests (`Tests/CipherCaskSyncTests/Server/rest_server.py`)
/// on 127.0.0.1 and a free port, started for one test and killed after it: `/users` in a
/// `result` envelope with `next` links (two per page), `Authorization: Bearer test-token`,
/// `/status/<code>`, `/bad` (malformed JSON), `/echo` (a 400 that repeats the request's
/// headers), and `/files/<name>` (what a PUT left, served as it was).
final class RESTServer: @unchecked Sendable {
  static let token = "test-token"
  static let authorization = "Authorization: Bearer \(token)"

  private let process = Process()
  let port: Int

  init() throws {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("CipherCaskSyncTests/Server/rest_server.py")
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", script.path]
    let output = Pipe()
    process.standardOutput = output
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
  }

  deinit {
    stop()
  }

  /// Kills the server (SIGKILL: the test runner's children may inherit a blocked SIGTERM).
  func stop() {
    if process.isRunning {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }

  /// `http://127.0.0.1:<port><path>`.
  func url(_ path: String) -> String {
    "http://127.0.0.1:\(port)\(path)"
  }

  /// Leaves `contents` at `/files/<name>`, to be served byte for byte.
  func put(file name: String, _ contents: String) async throws {
    var request = URLRequest(url: URL(string: url("/files/\(name)"))!)
    request.httpMethod = "PUT"
    request.setValue("Bearer \(Self.token)", forHTTPHeaderField: "Authorization")
    request.httpBody = Data(contents.utf8)
    let (_, response) = try await URLSession.shared.data(for: request)
    guard (response as? HTTPURLResponse)?.statusCode == 204 else {
      throw RESTServerError(description: "PUT /files/\(name) was not accepted")
    }
  }
}

struct RESTServerError: Error, CustomStringConvertible {
  var description: String
}

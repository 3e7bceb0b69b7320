import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// The fault-injecting proxy of the sync fault tests (`Tests/CipherCaskSyncTests/Server/fault_proxy.py`)
/// in front of a server on 127.0.0.1: answers with an injected status, hides tombstones, or
/// exits in the middle of a request (a server that stops); `restart()` brings it back on the
/// same port, in front of the same server and its data.
public final class FaultProxy: @unchecked Sendable {
  public let port: Int
  public let targetPort: Int
  private var process: Process?
  private var lifeline: Pipe?

  public init(targetPort: Int) throws {
    self.targetPort = targetPort
    port = try Self.launch(targetPort: targetPort, port: nil, into: &process, lifeline: &lifeline)
  }

  deinit { stop() }

  /// The proxy's `/v1` root.
  public var url: URL { URL(string: "http://127.0.0.1:\(port)/v1")! }

  /// Stops the proxy: connections are then refused.
  public func stop() {
    try? lifeline?.fileHandleForWriting.close()
    if let process, process.isRunning {
      kill(process.processIdentifier, SIGKILL)
    }
    process?.waitUntilExit()
    process = nil
    lifeline = nil
  }

  /// Starts it again on the same port (after `stop()`, or after a rule made it exit).
  public func restart() throws {
    stop()
    _ = try Self.launch(targetPort: targetPort, port: port, into: &process, lifeline: &lifeline)
  }

  /// Adds a rule (see the script's doc): `["status": 503, "retry_after": 1, "count": 2]`.
  public func add(rule: [String: Any]) async throws {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/__fault__")!)
    request.httpMethod = "POST"
    request.httpBody = try JSONSerialization.data(withJSONObject: rule)
    let (_, response) = try await URLSession.shared.data(for: request)
    guard (response as? HTTPURLResponse)?.statusCode == 204 else {
      throw KintoProcessError(description: "the fault proxy refused a rule")
    }
  }

  /// Drops every rule: requests are forwarded as they come.
  public func clearRules() async throws {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/__fault__")!)
    request.httpMethod = "DELETE"
    let (_, response) = try await URLSession.shared.data(for: request)
    guard (response as? HTTPURLResponse)?.statusCode == 204 else {
      throw KintoProcessError(description: "the fault proxy did not drop its rules")
    }
  }

  /// How many requests it forwarded to the server.
  public func forwarded() async throws -> Int {
    let (data, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)/__fault__/count")!)
    return ((try JSONSerialization.jsonObject(with: data) as? [String: Any])?["forwarded"] as? Int) ?? -1
  }

  private static func launch(
    targetPort: Int, port: Int?, into process: inout Process?, lifeline: inout Pipe?
  ) throws -> Int {
    let script = KintoProcess.repositoryRoot.appendingPathComponent("Tests/CipherCaskSyncTests/Server/fault_proxy.py")
    let child = Process()
    let pipe = Pipe()
    child.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    child.arguments = ["python3", script.path, String(targetPort)] + (port.map { [String($0)] } ?? [])
    child.standardInput = pipe
    let output = Pipe()
    child.standardOutput = output
    child.standardError = FileHandle.nullDevice
    try child.run()
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      line.append(chunk)
    }
    let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    guard text.hasPrefix("PORT "), let bound = Int(text.dropFirst(5)) else {
      kill(child.processIdentifier, SIGKILL)
      child.waitUntilExit()
      throw KintoProcessError(description: "the fault proxy did not start: '\(text)'")
    }
    process = child
    lifeline = pipe
    return bound
  }
}

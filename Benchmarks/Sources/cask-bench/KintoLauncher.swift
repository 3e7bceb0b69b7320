import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A Kinto server for `cask-bench sync`: the venv's `kinto` (scripts/setup.sh makes
/// `.venv-kinto`) on 127.0.0.1 and a free port, with the memory backend or a PostgreSQL
/// database, stopped with the run or with this process.
final class KintoLauncher: @unchecked Sendable {
  static let user = "bench"
  static let password = "kinto-bench-password"

  /// The server's `/v1` root.
  let url: URL
  let directory: String
  private let process = Process()
  private let lifeline = Pipe()

  /// Starts Kinto and waits until `/v1/` answers.
  ///
  /// - Parameters:
  ///   - postgres: a PostgreSQL URL for storage and permissions (migrated first), or `nil` for
  ///     the memory backend.
  ///   - directory: where the settings and the server's log go.
  init(postgres: String?, directory: String) throws {
    // The venv's `kinto` in the repository this binary was built from.
    let executable = ResultsDestination.repository + "/.venv-kinto/bin/kinto"
    guard FileManager.default.isExecutableFile(atPath: executable) else {
      throw BenchError("no kinto at '\(executable)': run scripts/setup.sh (it makes .venv-kinto)")
    }
    let port = try Loopback.freePort()
    url = URL(string: "http://127.0.0.1:\(port)/v1")!
    self.directory = directory
    let ini = directory + "/kinto.ini"
    let log = directory + "/kinto.log"
    try explained("cannot write '\(ini)'") {
      try Self.settings(port: port, postgres: postgres).write(toFile: ini, atomically: true, encoding: .utf8)
    }
    if postgres != nil {
      guard (try? Subprocess.output(executable, ["migrate", "--ini", ini])) != nil else {
        throw BenchError("kinto migrate failed on the PostgreSQL database given")
      }
    }
    // The shell kills Kinto when the lifeline closes: in `stop()`, or when this process ends
    // in any way, so that no server outlives a run.
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = [
      "-c", "\"$0\" start --ini \"$1\" >\"$2\" 2>&1 & child=$!; cat >/dev/null; kill -9 $child; wait $child",
      executable, ini, log,
    ]
    process.standardInput = lifeline
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try explained("cannot start kinto") { try process.run() }
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      if Self.answers(url.appendingPathComponent("/")) { return }
      usleep(100_000)
    }
    stop()
    let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(1_000)
    throw BenchError("kinto did not answer on 127.0.0.1:\(port) within 30 s; its log ends: \(tail)")
  }

  deinit {
    stop()
  }

  func stop() {
    try? lifeline.fileHandleForWriting.close()
    if process.isRunning { process.waitUntilExit() }
  }

  /// Whether a GET of `url` answers 200 within 2 s.
  private static func answers(_ url: URL) -> Bool {
    let status = try? AsyncBridge.wait {
      let (_, response) = try await URLSession.shared.data(for: URLRequest(url: url, timeoutInterval: 2))
      return (response as? HTTPURLResponse)?.statusCode ?? 0
    }
    return status == 200
  }

  /// Basic auth for any user and password (the first request makes the account), buckets
  /// made by any authenticated user, the default batch limit of 25. Without logging sections
  /// the server logs at Python's default level, WARNING: no line per request.
  static func settings(port: Int, postgres: String?) -> String {
    let backend =
      postgres.map {
        """
        kinto.storage_backend = kinto.core.storage.postgresql
        kinto.storage_url = \($0)
        kinto.permission_backend = kinto.core.permission.postgresql
        kinto.permission_url = \($0)
        """
      } ?? "kinto.storage_backend = kinto.core.storage.memory\nkinto.permission_backend = kinto.core.permission.memory"
    return """
      [app:main]
      use = egg:kinto
      \(backend)
      kinto.cache_backend = kinto.core.cache.memory
      multiauth.policies = basicauth
      kinto.bucket_create_principals = system.Authenticated

      [server:main]
      use = egg:waitress#main
      host = 127.0.0.1
      port = \(port)

      """
  }
}

/// TCP sockets on 127.0.0.1.
enum Loopback {
  /// The IPv4 address of 127.0.0.1 and `port`.
  static func address(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    return address
  }

  /// A TCP socket bound to a free port (port 0, the system's choice), and that port.
  static func bind() throws -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw BenchError("socket() failed: \(String(cString: strerror(errno)))") }
    var address = address(port: 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(descriptor, $0, length) }
    }
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    guard bound == 0, named == 0 else {
      close(descriptor)
      throw BenchError("cannot bind a port on 127.0.0.1")
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
  }

  /// A port that nothing listens on now (bound, then released) for a server to take.
  static func freePort() throws -> Int {
    let (descriptor, port) = try bind()
    close(descriptor)
    return port
  }
}

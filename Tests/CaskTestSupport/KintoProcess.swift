import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// A real Kinto server on 127.0.0.1 and a free port, from the venv `scripts/setup.sh` makes
/// (`.venv-kinto`), started for one test and stopped after it.
///
/// The memory backend by default. With `CASK_SYNC_POSTGRES` set to a PostgreSQL URL
/// (`postgresql://postgres@127.0.0.1/kinto`), storage and permissions go to that database, which
/// several processes then share (`.ci/run` sets it for one run of the sync tests).
public final class KintoProcess: @unchecked Sendable {
  public static let user = "device"
  public static let password = "kinto-test-password"

  public let port: Int
  public let url: URL
  public let directory: URL
  /// The PostgreSQL database it stores in, or `nil` for the memory backend.
  public let database: String?
  private let ini: URL
  private var process: Process?
  private var lifeline: Pipe?

  /// The repository's root, from this file's path.
  public static var repositoryRoot: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
  }

  /// The `kinto` command of the venv.
  public static var executable: URL { repositoryRoot.appendingPathComponent(".venv-kinto/bin/kinto") }

  /// The PostgreSQL URL the tests are pointed at, if any.
  public static var postgresURL: String? {
    ProcessInfo.processInfo.environment["CASK_SYNC_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
  }

  /// Starts Kinto and waits until `/v1/` answers.
  ///
  /// - Parameters:
  ///   - batchLimit: the server's `batch_max_requests`.
  ///   - backoff: a `Backoff` header (seconds) on every answer, when set.
  /// - Throws: `KintoProcessError` naming `scripts/setup.sh` when Kinto is not installed, or
  ///   when it does not answer within 30 s.
  public init(batchLimit: Int = 25, backoff: Int? = nil, database: String? = nil) throws {
    guard FileManager.default.isExecutableFile(atPath: Self.executable.path) else {
      throw KintoProcessError(
        description:
          "Kinto is not installed at \(Self.executable.path): run scripts/setup.sh (it makes .venv-kinto with PyPI's kinto)"
      )
    }
    port = try Self.freePort()
    url = URL(string: "http://127.0.0.1:\(port)/v1")!
    directory = FileManager.default.temporaryDirectory.appendingPathComponent("cask-kinto-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    ini = directory.appendingPathComponent("kinto.ini")
    self.database = try database ?? (Self.postgresURL == nil ? nil : PostgresCluster.shared().makeDatabase())
    try Self.settings(port: port, batchLimit: batchLimit, backoff: backoff, database: self.database)
      .write(to: ini, atomically: true, encoding: .utf8)
    if self.database != nil { try Self.migrate(ini) }
    try start()
  }

  deinit {
    stop()
    try? FileManager.default.removeItem(at: directory)
  }

  /// Starts the server (again, after `stop()`) on the same port and waits for it.
  public func start() throws {
    let lifeline = Pipe()
    let process = Process()
    // The shell kills Kinto when the lifeline closes: with `stop()`, or with the test process.
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = [
      "-c", "\"$0\" start --ini \"$1\" >\"$2\" 2>&1 & child=$!; cat >/dev/null; kill -9 $child; wait $child",
      Self.executable.path, ini.path, directory.appendingPathComponent("kinto.log").path,
    ]
    process.standardInput = lifeline
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    self.process = process
    self.lifeline = lifeline
    try waitUntilAnswering()
  }

  /// Stops the server (its memory backend loses everything; PostgreSQL keeps it).
  public func stop() {
    try? lifeline?.fileHandleForWriting.close()
    process?.waitUntilExit()
    process = nil
    lifeline = nil
  }

  private func waitUntilAnswering() throws {
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      if Self.answers(url.appendingPathComponent("/")) { return }
      usleep(100_000)
    }
    let log = (try? String(contentsOf: directory.appendingPathComponent("kinto.log"), encoding: .utf8)) ?? ""
    throw KintoProcessError(
      description: "Kinto did not answer on port \(port) within 30 s; its log: \(log.suffix(2000))")
  }

  /// Whether a GET of `url` gets an HTTP answer.
  static func answers(_ url: URL) -> Bool {
    let done = DispatchSemaphore(value: 0)
    let answered = LockedFlag()
    var request = URLRequest(url: url, timeoutInterval: 2)
    request.httpMethod = "GET"
    URLSession.shared.dataTask(with: request) { _, response, _ in
      if (response as? HTTPURLResponse)?.statusCode == 200 { answered.set() }
      done.signal()
    }.resume()
    _ = done.wait(timeout: .now() + 3)
    return answered.value
  }

  /// A port nobody listens on now.
  public static func freePort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw KintoProcessError(description: "socket() failed") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0 else { throw KintoProcessError(description: "bind() failed") }
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    guard named == 0 else { throw KintoProcessError(description: "getsockname() failed") }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// `kinto migrate`: the PostgreSQL schema (done once; later runs find it there).
  private static func migrate(_ ini: URL) throws {
    let process = Process()
    process.executableURL = executable
    process.arguments = ["migrate", "--ini", ini.path]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      throw KintoProcessError(description: "kinto migrate failed")
    }
  }

  /// Runs `kinto purge-deleted` on this server's PostgreSQL database: every tombstone of
  /// records goes. (With the memory backend the command cannot reach the server's memory.)
  public func purgeDeleted() throws {
    let process = Process()
    process.executableURL = Self.executable
    process.arguments = ["purge-deleted", "--ini", ini.path, "record", "0"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw KintoProcessError(description: "kinto purge-deleted failed") }
  }

  static func settings(port: Int, batchLimit: Int, backoff: Int?, database: String?) -> String {
    let backend: String
    if let postgres = database {
      backend = """
        kinto.storage_backend = kinto.core.storage.postgresql
        kinto.storage_url = \(postgres)
        kinto.permission_backend = kinto.core.permission.postgresql
        kinto.permission_url = \(postgres)
        kinto.cache_backend = kinto.core.cache.memory
        """
    } else {
      backend = """
        kinto.storage_backend = kinto.core.storage.memory
        kinto.permission_backend = kinto.core.permission.memory
        kinto.cache_backend = kinto.core.cache.memory
        """
    }
    return """
      [app:main]
      use = egg:kinto
      \(backend)
      multiauth.policies = basicauth
      kinto.bucket_create_principals = system.Authenticated
      kinto.batch_max_requests = \(batchLimit)
      \(backoff.map { "kinto.backoff = \($0)" } ?? "")

      [server:main]
      use = egg:waitress#main
      host = 127.0.0.1
      port = \(port)

      [loggers]
      keys = root
      [handlers]
      keys = console
      [formatters]
      keys = generic
      [logger_root]
      level = WARNING
      handlers = console
      [handler_console]
      class = StreamHandler
      args = (sys.stderr,)
      level = NOTSET
      formatter = generic
      [formatter_generic]
      format = %(message)s

      """
  }
}

public struct KintoProcessError: Error, CustomStringConvertible {
  public var description: String
  public init(description: String) { self.description = description }
}

/// A flag set from a URLSession callback and read after the wait.
final class LockedFlag: @unchecked Sendable {
  private let lock = NSLock()
  private var flag = false
  func set() { lock.withLock { flag = true } }
  var value: Bool { lock.withLock { flag } }
}

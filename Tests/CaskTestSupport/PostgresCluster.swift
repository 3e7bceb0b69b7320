import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The PostgreSQL that Kinto tests on PostgreSQL use: the server `CASK_SYNC_POSTGRES` names
/// (`postgresql://postgres@127.0.0.1:5432/postgres`, as `.ci/run` starts it), or else a cluster
/// of this test process, made with `initdb` in a temporary directory (as the `postgres` user
/// when run as root), started on a free port and stopped when the process ends. Each test gets
/// a database of its own.
public final class PostgresCluster: @unchecked Sendable {
  /// `postgresql://user@host:port` without a database.
  public let server: String
  private static let lock = NSLock()
  nonisolated(unsafe) private static var instance: PostgresCluster?

  /// The shared cluster, started on first use.
  ///
  /// - Throws: `KintoProcessError` naming scripts/setup.sh when PostgreSQL is not installed.
  public static func shared() throws -> PostgresCluster {
    try lock.withLock {
      if let instance { return instance }
      let made = try PostgresCluster()
      instance = made
      return made
    }
  }

  private init() throws {
    if let url = KintoProcess.postgresURL, let components = URLComponents(string: url) {
      var base = components
      base.path = ""
      server = base.string ?? url
      return
    }
    let bin = try Self.binaries()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cask-pg-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let asRoot = getuid() == 0
    if asRoot { try Self.run("/bin/chown", ["postgres", directory.path]) }
    let user = asRoot ? ["/usr/sbin/runuser", "-u", "postgres", "--"] : []
    let data = directory.appendingPathComponent("data").path
    let initdb = user + ["\(bin)/initdb", "-D", data, "-A", "trust", "-U", "postgres"]
    try Self.run(initdb[0], Array(initdb.dropFirst()))
    let port = try KintoProcess.freePort()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    // The shell stops the server (fast shutdown) when this process is gone: a lifeline pipe
    // is not enough here, as processes started later (Kinto, psql) inherit its write end.
    let command = (user + ["\(bin)/postgres"]).map { "'\($0)'" }.joined(separator: " ")
    process.arguments = [
      "-c",
      "\(command) -D '\(data)' -p \(port) -k '\(directory.path)' -c listen_addresses=127.0.0.1 -c fsync=off "
        + ">'\(directory.path)/postgres.log' 2>&1 & child=$!; "
        + "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; "
        + (user + ["\(bin)/pg_ctl"]).map { "'\($0)'" }.joined(separator: " ")
        + " -D '\(data)' -m fast stop; wait $child",
    ]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    server = "postgresql://postgres@127.0.0.1:\(port)"
    let deadline = Date().addingTimeInterval(30)
    while (try? Self.run("\(bin)/pg_isready", ["-h", "127.0.0.1", "-p", "\(port)", "-q"])) == nil {
      guard Date() < deadline else { throw KintoProcessError(description: "PostgreSQL did not start in 30 s") }
      usleep(100_000)
    }
  }

  /// A new, empty database; its URL.
  public func makeDatabase() throws -> String {
    let name = "cask_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
    try Self.run(try Self.binaries() + "/psql", [server + "/postgres", "-q", "-c", "CREATE DATABASE \(name)"])
    return server + "/" + name
  }

  /// `pg_dump` of a database: every row of every table, as text.
  public static func dump(_ database: String) throws -> String {
    try run(try binaries() + "/pg_dump", ["--data-only", database])
  }

  /// Runs SQL on a database with `psql` and returns what it printed.
  @discardableResult
  public static func sql(_ database: String, _ statement: String) throws -> String {
    try run(try binaries() + "/psql", [database, "-q", "-t", "-A", "-c", statement])
  }

  /// The directory of PostgreSQL's programs (the newest installed version).
  public static func binaries() throws -> String {
    let root = "/usr/lib/postgresql"
    let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
    guard let newest = versions.last else {
      throw KintoProcessError(description: "PostgreSQL is not installed in \(root): run scripts/setup.sh")
    }
    return "\(root)/\(newest)/bin"
  }

  /// Runs a program to its end and returns its output.
  ///
  /// - Throws: `KintoProcessError` with its error output when it exits non-zero.
  @discardableResult
  static func run(_ executable: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    let problem = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
      let name = (executable as NSString).lastPathComponent
      throw KintoProcessError(
        description: "\(name) failed: \(String(decoding: problem.prefix(500), as: UTF8.self))")
    }
    return String(decoding: data, as: UTF8.self)
  }
}

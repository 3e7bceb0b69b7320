import CaskTestSupport
import Foundation
import Testing

/// A store on a read-only file system (a backup on read-only media, a read-only mount): the
/// commands that only read it work, and those that write fail with one clear line. Prevents
/// the read-only open failing on its lock file, which it opened for writing. The read-only
/// mount is a bind mount in a mount namespace of the child's own
/// (`unshare -m`), so nothing outside the child sees it.
@Suite(
  "A store on a read-only file system can be read",
  .enabled(if: ReadOnlyMount.isAvailable, "needs unshare -m and mount (root or CAP_SYS_ADMIN)"))
struct ReadOnlyMediaTests {
  let password = "read-only-pw"

  @Test("get, keys and stats read it, with or without a LOCK file; put fails with one line naming the cause")
  func readOnlyMount() throws {
    let cask = try CaskRunner("read-only-media")
    defer { cask.remove() }
    _ = try cask.createStore("s", password: password)
    #expect(try cask.run(["put", "s", "k"], password: password, stdin: Data("v".utf8)).status == 0)
    let prefix = ReadOnlyMount.prefix(cask.path(""))
    let store = cask.path("s")
    for withLock in [true, false] {
      if !withLock { try FileManager.default.removeItem(atPath: "\(store)/LOCK") }  // a copy of a store
      let get = try cask.run(["get", store, "k"], password: password, prefix: prefix)
      #expect(get.status == 0, "\(get.err)")
      #expect(get.out == "v")
      #expect(try cask.run(["keys", store], password: password, prefix: prefix).out == "k\n")
      #expect(try cask.run(["stats", store], password: password, prefix: prefix).status == 0)
      let put = try cask.run(["put", store, "k2"], password: password, stdin: Data("w".utf8), prefix: prefix)
      #expect(put.status == 1)
      #expect(put.err.hasPrefix("Error: store '\(store)': ") && put.err.contains("Read-only file system"), "\(put.err)")
      #expect(put.err.split(separator: "\n").count == 1)
    }
  }
}

/// Runs a command where a directory is mounted read-only.
enum ReadOnlyMount {
  /// `cask` in a new mount namespace where `directory` is mounted read-only over itself.
  static func prefix(_ directory: String) -> [String] {
    [
      "/usr/bin/unshare", "-m", "/bin/sh", "-c",
      #"mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@""#, directory,
    ]
  }

  static let isAvailable: Bool = {
    guard let directory = try? TemporaryDirectory("ro-probe") else { return false }
    defer { directory.remove() }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
    process.arguments =
      Array(prefix(directory.path).dropFirst()) + ["/bin/sh", "-c", #"! touch "$0/x""#, directory.path]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
  }()
}

/// A store its owner shares by read permission (`chmod -R go+rX`): another user reads it, and
/// a write fails with one line. Prevents the read-only open failing on its lock file, which
/// it opened for writing, with "Permission denied". The other
/// user is `nobody`, through `setpriv`, so the suite runs only as root.
@Suite(
  "A store shared by read permission can be read by another user",
  .enabled(if: OtherUser.isAvailable, "needs root and setpriv to run cask as nobody"))
struct SharedStoreTests {
  let password = "shared-pw"

  @Test("get, keys and stats work as nobody; put fails naming the cause; an unreadable LOCK is refused, not skipped")
  func readPermissionOnly() throws {
    let cask = try CaskRunner("shared-store")
    defer { cask.remove() }
    let store = try cask.createStore("s", password: password)
    #expect(try cask.run(["put", "s", "k"], password: password, stdin: Data("v".utf8)).status == 0)
    try OtherUser.share(cask.path(""))
    let get = try cask.run(["get", store, "k"], password: password, prefix: OtherUser.prefix)
    #expect(get.status == 0, "\(get.err)")
    #expect(get.out == "v")
    #expect(try cask.run(["keys", store], password: password, prefix: OtherUser.prefix).out == "k\n")
    #expect(try cask.run(["stats", store], password: password, prefix: OtherUser.prefix).status == 0)
    let put = try cask.run(["put", store, "k2"], password: password, stdin: Data("w".utf8), prefix: OtherUser.prefix)
    #expect(put.status == 1)
    #expect(put.err.hasPrefix("Error: store '\(store)': ") && put.err.contains("Permission denied"), "\(put.err)")
    #expect(put.err.split(separator: "\n").count == 1)
    #expect(try cask.run(["get", "s", "k2"], password: password).status != 0, "nothing was written")

    // A LOCK the reader cannot open: the owner's writer may be running, so no lock-less read.
    #expect(chmod("\(store)/LOCK", 0o600) == 0)
    let refused = try cask.run(["get", store, "k"], password: password, prefix: OtherUser.prefix)
    #expect(refused.status == 1)
    #expect(refused.err.contains("LOCK") && refused.err.contains("Permission denied"), "\(refused.err)")
    #expect(refused.err.split(separator: "\n").count == 1)
  }
}

/// Runs a command as `nobody`.
enum OtherUser {
  static let prefix = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

  /// Makes everything under `directory` readable (and its directories searchable) by others.
  static func share(_ directory: String) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/chmod")
    process.arguments = ["-R", "go+rX", directory]
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
  }

  /// Root, `setpriv`, and a `cask` binary that `nobody` can run (its directories searchable).
  static let isAvailable: Bool = {
    guard getuid() == 0, FileManager.default.isExecutableFile(atPath: prefix[0]),
      let binary = try? CaskRunner.binary()
    else { return false }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: prefix[0])
    process.arguments = Array(prefix.dropFirst()) + ["/bin/sh", "-c", #"test -x "$0""#, binary]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
  }()
}

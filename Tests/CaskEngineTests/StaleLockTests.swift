import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// A process that dies holding the store's lock leaves the LOCK file behind, but not the lock:
/// it is an advisory `flock`, released by the kernel with the process.
@Suite("Stale lock after a crash")
struct StaleLockTests {
  @Test("a writer SIGKILLed while holding the lock leaves LOCK behind, and the next open takes it at once")
  func killedHolder() throws {
    let writer = try CrashWriterBinary.locate()
    try withTemporaryDirectory("stale-lock") { directory throws in
      let path = directory.file("store.cask")
      try CaskStore(path: path, password: "pw", options: CaskStore.Options(durability: .never)).close()

      let seed: UInt64 = 42
      let count = try CrashWriterProcess.run(
        binary: writer, arguments: [path, "pw", String(seed), "0", String(1 << 20)],
        plan: KillPlan(afterAcknowledgements: 5, delayMicroseconds: 0), log: directory.file("writer.log"),
        context: "stale lock")
      #expect(count >= 5)
      #expect(FileManager.default.fileExists(atPath: path + "/" + CaskFormat.lockFileName))

      var workload = CrashWorkload(seed: seed, run: 0)
      var acknowledged: [String: Data] = [:]
      for _ in 0..<count { CrashWorkload.apply(workload.next(), to: &acknowledged) }
      var withInFlight = acknowledged
      CrashWorkload.apply(workload.next(), to: &withInFlight)

      for readOnly in [true, false] {
        let options = CaskStore.Options(durability: .never, autoCompaction: nil, readOnly: readOnly)
        let store = try CaskStore(path: path, password: "pw", options: options)
        var contents: [String: Data] = [:]
        for key in try store.keys() { contents[key] = try store.get(key) }
        #expect(contents == acknowledged || contents == withInFlight, "readOnly: \(readOnly)")
        try store.close()
      }
    }
  }
}

/// A child process started while a store is open shares the open file description of the
/// store's LOCK until its `exec` closes it. The lock must still end with `close()`.
@Suite("A lock shared with a child process")
struct InheritedLockTests {
  /// The descriptors of this process open on `path`, found through /proc/self/fd.
  private static func descriptors(openOn path: String) throws -> [Int32] {
    let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    return try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { name in
      guard let descriptor = Int32(name),
        let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"),
        link == target
      else { return nil }
      return descriptor
    }
  }

  /// Starts `/bin/sleep` with a copy of `descriptor` as its descriptor 3 (a copy made by
  /// `dup2` has no close-on-exec flag, so the child keeps it for as long as it lives).
  private static func spawnHolding(_ descriptor: Int32) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, descriptor, 3)
    let words: [String] = ["/bin/sleep", "60"]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer {
      for pointer in argv { free(pointer) }
    }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, "/bin/sleep", &actions, nil, argv, environ)
    guard spawned == 0 else { throw CocoaError(.executableLoad) }
    return pid
  }

  @Test("close() releases the lock even while a child process still holds the LOCK descriptor")
  func childHoldsDescriptor() throws {
    try withTemporaryDirectory("inherited-lock") { directory throws in
      let path = directory.file("store.cask")
      let keys = try RNCryptor.Keys.random()
      let options = CaskStore.Options(durability: .never, autoCompaction: nil)
      let store = try CaskStore(path: path, keys: keys, options: options)
      try store.put(Data("v".utf8), forKey: "k")
      let lockDescriptors = try Self.descriptors(openOn: "\(path)/\(CaskFormat.lockFileName)")
      #expect(lockDescriptors.count == 1)
      let lockDescriptor = try #require(lockDescriptors.first)
      let child = try Self.spawnHolding(lockDescriptor)
      defer {
        kill(child, SIGKILL)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
      }
      try store.close()

      let reopened = try CaskStore(path: path, keys: keys, options: options)
      #expect(try reopened.get("k") == Data("v".utf8))
      try reopened.close()
    }
  }
}

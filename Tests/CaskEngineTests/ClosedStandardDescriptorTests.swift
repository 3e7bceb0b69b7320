import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// A process started with standard input, output and error closed: the store's files must
/// not take descriptors 0, 1 or 2, or the process's next `print` (or anyone's write to
/// "standard error") lands in a segment and destroys it.
@Suite("Closed standard descriptors")
struct ClosedStandardDescriptorTests {
  @Test("a writer started with fds 0-2 closed keeps its store intact: its output does not land in a store file")
  func writerWithClosedDescriptors() throws {
    try withTemporaryDirectory("closed-fds") { directory throws in
      let path = directory.file("store.cask")
      let binary = try CrashWriterBinary.locate()
      let seed: UInt64 = 0x00C1_05ED
      let operations = 40
      // The writer prints a line after every operation to descriptor 1, which here is closed.
      let arguments = [path, "pw", String(seed), "0", String(1 << 20), String(operations)]
      var actions = posix_spawn_file_actions_t()
      posix_spawn_file_actions_init(&actions)
      defer { posix_spawn_file_actions_destroy(&actions) }
      for descriptor: Int32 in 0...2 { posix_spawn_file_actions_addclose(&actions, descriptor) }
      let argv = ([binary.path] + arguments).map { strdup($0) } + [nil]
      defer {
        for pointer in argv { free(pointer) }
      }
      var pid: pid_t = 0
      #expect(posix_spawn(&pid, binary.path, &actions, nil, argv, environ) == 0)
      var status: Int32 = 0
      while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
      #expect(status == 0, "the writer failed (wait status \(status))")

      var model: [String: Data] = [:]
      var workload = CrashWorkload(seed: seed, run: 0)
      while workload.index < operations { CrashWorkload.apply(workload.next(), to: &model) }
      let store = try CaskStore(path: path, password: "pw", options: CaskStore.Options(readOnly: true))
      defer { try? store.close() }
      #expect(store.stats().recovery.isClean, "the store was damaged: \(store.stats().recovery)")
      var stored: [String: Data] = [:]
      for key in try store.keys() { stored[key] = try store.get(key) }
      #expect(stored == model)
    }
  }
}

/// With 0-2 closed and no free descriptor above them, a file made by the codec (a temporary
/// output) or by the engine (`createNew`) lands on a standard descriptor that cannot be moved
/// off (`EMFILE`): the call fails, and the file it made is removed. The engine used to leave
/// it (harmless for its `.tmp` names, which the next open removes; a backup's `CASK.tmp` then
/// kept its directory from being removed); the codec's removal had no test. Run in a child
/// (`cask-crash-writer --no-spare-descriptor`), whose descriptor table it fills.
@Suite("No spare descriptor above the standard ones")
struct NoSpareDescriptorTests {
  /// The child lowers its descriptor limit to 64, which a hard limit below that forbids.
  static var limitCanBeSet: Bool {
    var limit = rlimit()
    return getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_max >= 64
  }

  @Test(
    "the codec's temporary output and the engine's new file are removed when they cannot leave fds 0-2",
    .enabled(if: limitCanBeSet, "the hard limit on open files is below 64"))
  func createdFilesAreRemoved() throws {
    try withTemporaryDirectory("no-spare-fd") { directory throws in
      let binary = try CrashWriterBinary.locate()
      let process = Process()
      process.executableURL = binary
      process.arguments = ["--no-spare-descriptor", directory.path]
      try process.run()
      process.waitUntilExit()
      let meanings: [Int32: String] = [
        2: "the set-up failed", 10: "the codec did not fail", 11: "the codec failed with another error",
        12: "the codec left its temporary file", 20: "the engine did not fail",
        21: "the engine failed with another error", 22: "the engine left the file it made",
      ]
      #expect(
        process.terminationReason == .exit && process.terminationStatus == 0,
        "\(process.terminationStatus): \(meanings[process.terminationStatus] ?? "killed")")
    }
  }
}

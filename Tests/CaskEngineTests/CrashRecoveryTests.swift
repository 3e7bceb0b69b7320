import CaskTestSupport
import Foundation
import Synchronization
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// Kills a real writer process with SIGKILL at seeded random moments, many times on the same
/// store, and checks after every kill that nothing acknowledged was lost and no batch was split.
///
/// The writer is `cask-crash-writer` (Tests/CrashWriter), built by `swift build --build-tests`
/// (and so by `swift test`) into the same products directory as the test bundle; the test never
/// builds anything. A SIGKILL keeps what reached the page cache, so this finds recovery and
/// ordering bugs (torn tails, half-finished segment switches and compactions, stale hints);
/// losing unsynced data is the business of GroupCommitTests.
@Suite("Crash recovery with real processes")
struct CrashRecoveryTests {
  static let password = "crash-test"

  @Test("SIGKILL at random moments never loses an acknowledged write or splits a batch")
  func killRepeatedly() throws {
    let writer = try CrashWriterBinary.locate()
    var random = SeededRandom.make(test: "crash-kill")
    let seed = random.next()
    try withTemporaryDirectory("crash") { directory throws in
      let path = directory.file("store.cask")
      // Create the store first, so that even the first run can be killed before it writes anything.
      try CaskStore(path: path, password: Self.password, options: CaskStore.Options(durability: .never)).close()

      var model: [String: Data] = [:]
      var acknowledged = 0
      var inFlightApplied = 0
      var tornTails = 0
      let runs = testIterations(20)
      for run in 0..<runs {
        let limits: [UInt64] = [4 << 10, 8 << 10, 32 << 10]
        let segmentLimit = limits[Int(random.next() % UInt64(limits.count))]
        let plan: KillPlan
        if random.next() % 8 == 0 {
          // Kill during start-up: exec, open, recovery of the previous crash.
          plan = KillPlan(afterAcknowledgements: nil, delayMicroseconds: UInt32(random.next() % 40_000))
        } else {
          let most: UInt64 = random.next() % 5 == 0 ? 300 : 60
          plan = KillPlan(
            afterAcknowledgements: Int(1 + random.next() % most), delayMicroseconds: UInt32(random.next() % 3_000))
        }
        let context = "run \(run) of seed \(seed) (CASK_TEST_SEED replays the whole test)"
        let count = try CrashWriterProcess.run(
          binary: writer,
          arguments: [path, Self.password, String(seed), String(run), String(segmentLimit)],
          plan: plan, log: directory.file("writer-\(run).log"), context: context)
        acknowledged += count

        // Replay what the writer did: the acknowledged prefix, and the one operation in flight.
        var workload = CrashWorkload(seed: seed, run: run)
        for _ in 0..<count { CrashWorkload.apply(workload.next(), to: &model) }
        var withInFlight = model
        CrashWorkload.apply(workload.next(), to: &withInFlight)
        // Every other check opens read-only, so that the next writer itself recovers a crashed store.
        let (found, recovery) = try Self.checkStore(at: path, readOnly: run % 2 == 0, context: context)
        if recovery.truncatedBytes > 0 { tornTails += 1 }
        if found == model {
          continue
        } else if found == withInFlight {
          model = withInFlight
          inFlightApplied += 1
        } else {
          Issue.record(
            Comment(
              rawValue: "after \(context), killed after \(count) acknowledged operations, the store holds neither "
                + "the acknowledged state nor that plus the operation in flight:\n"
                + Self.difference(expected: model, found: found)))
          return
        }
      }

      // A clean open and a reopen from hint files see the same contents.
      for _ in 0..<2 {
        #expect(try Self.checkStore(at: path, readOnly: false, context: "final open of seed \(seed)").contents == model)
      }
      print(
        "[crash-kill] \(runs) kills, \(acknowledged) acknowledged operations, "
          + "\(inFlightApplied) in-flight operations found applied, \(tornTails) torn tails, "
          + "\(model.count) keys at the end")
    }
  }

  /// Opens the store after a crash, checks its health and returns its contents.
  private static func checkStore(at path: String, readOnly: Bool, context: String) throws -> (
    contents: [String: Data], recovery: RecoveryReport
  ) {
    let options = CaskStore.Options(durability: .never, autoCompaction: nil, readOnly: readOnly)
    let store = try CaskStore(path: path, password: password, options: options)
    defer { try? store.close() }
    let recovery = store.stats().recovery
    #expect(recovery.corruptRegions.isEmpty, "damage inside a segment after \(context): \(recovery.corruptRegions)")
    #expect(recovery.unreadableSegments.isEmpty, "unreadable segments after \(context)")
    let report = try store.verify()
    if readOnly {
      // Nothing was cut: verify sees the torn tail that open skipped, and nothing else.
      let tail = report.damage.reduce(0) { $0 + $1.length }
      #expect(
        report.damage.count <= 1 && tail == recovery.truncatedBytes,
        "verify after \(context) found more than the torn tail of \(recovery.truncatedBytes) bytes: \(report.damage)")
    } else {
      #expect(report.isClean, "verify after \(context) (torn tail already cut): \(report.damage)")
    }
    var contents: [String: Data] = [:]
    for key in try store.keys() {
      contents[key] = try store.get(key)
    }
    return (contents, recovery)
  }

  /// Which keys differ, with the readable prefix of each value (run.index.step.key).
  private static func difference(expected: [String: Data], found: [String: Data]) -> String {
    func label(_ value: Data?) -> String {
      guard let value else { return "absent" }
      return String(decoding: value.prefix { $0 != UInt8(ascii: "|") }, as: UTF8.self)
    }
    return Set(expected.keys).union(found.keys).sorted().filter { expected[$0] != found[$0] }.map {
      "  \($0): expected \(label(expected[$0])), found \(label(found[$0]))"
    }.joined(separator: "\n")
  }
}

/// When to kill the writer: after its n-th acknowledgement (or right after start when `nil`),
/// plus a delay that lets it get into the middle of its next operation.
struct KillPlan {
  var afterAcknowledgements: Int?
  var delayMicroseconds: UInt32
}

/// Thrown when the writer cannot be run, or does not behave as it should.
struct CrashWriterFailure: Error, CustomStringConvertible {
  var description: String
}

/// Runs `cask-crash-writer` once and kills it as planned.
enum CrashWriterProcess {
  /// Kills a writer that never reaches its kill point, so that a hang fails instead of blocking.
  private final class Watchdog: Sendable {
    let finished = Atomic(false)
    let timedOut = Atomic(false)
  }

  /// How long a writer may take to reach the planned acknowledgement.
  static let timeout: Double = 120

  /// - Returns: how many operations the writer acknowledged (operations `0..<n`).
  static func run(binary: URL, arguments: [String], plan: KillPlan, log: String, context: String) throws -> Int {
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    let errors = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    defer { try? errors.close() }
    process.standardError = errors
    try process.run()

    let pid = process.processIdentifier
    let watchdog = Watchdog()
    DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
      guard !watchdog.finished.load(ordering: .acquiring) else { return }
      watchdog.timedOut.store(true, ordering: .releasing)
      kill(pid, SIGKILL)
    }

    var killed = false
    func killNow() {
      if plan.delayMicroseconds > 0 { usleep(plan.delayMicroseconds) }
      kill(pid, SIGKILL)
      killed = true
    }
    if plan.afterAcknowledgements == nil { killNow() }

    var pending = Data()
    var count = 0
    var wrongLine: String?
    while true {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      pending.append(chunk)
      // A line counts only once complete: a half-printed acknowledgement is not one.
      while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
        let line = Substring(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
        pending.removeSubrange(pending.startIndex...newline)
        if line == CrashWriterLine.opened { continue }
        if CrashWriterLine.acknowledgedIndex(line) == count {
          count += 1
        } else if wrongLine == nil {
          wrongLine = String(line)
        }
      }
      if !killed, let target = plan.afterAcknowledgements, count >= target { killNow() }
    }
    watchdog.finished.store(true, ordering: .releasing)
    process.waitUntilExit()

    let stderr = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    if watchdog.timedOut.load(ordering: .acquiring) {
      throw CrashWriterFailure(
        description: "\(context): the writer did not reach its kill point within \(Int(timeout)) s "
          + "(\(count) acknowledged). Its stderr:\n\(stderr)")
    }
    guard process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL else {
      throw CrashWriterFailure(
        description: "\(context): the writer exited by itself with status \(process.terminationStatus) "
          + "after \(count) acknowledged operations. Its stderr:\n\(stderr)")
    }
    if let wrongLine {
      throw CrashWriterFailure(
        description: "\(context): unexpected line from the writer after \(count) acknowledgements: \(wrongLine)")
    }
    // The writer is silent on stderr; anything there (a ThreadSanitizer report, when the tests
    // are built with --sanitize=thread) is a failure that the kill would otherwise hide.
    guard stderr.isEmpty else {
      throw CrashWriterFailure(description: "\(context): the writer wrote to stderr:\n\(stderr)")
    }
    return count
  }
}

/// Finds the `cask-crash-writer` executable that the build put beside the test bundle.
enum CrashWriterBinary {
  static let name = "cask-crash-writer"

  /// The directories searched, most trusted first: where the running test binary is (the
  /// products directory of this very build, whatever its configuration or scratch path), then
  /// the package's `.build/debug` and `.build/release`, found from this source file.
  static func candidateDirectories(sourceFile: String = #filePath) -> [URL] {
    var directories: [URL] = []
    #if os(Linux)
      directories.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
    #endif
    if let executable = Bundle.main.executableURL {
      directories.append(executable.resolvingSymlinksInPath().deletingLastPathComponent())
    }
    if let first = CommandLine.arguments.first {
      directories.append(URL(fileURLWithPath: first).resolvingSymlinksInPath().deletingLastPathComponent())
    }
    // On Darwin the tests run inside `CipherCaskPackageTests.xctest`, a bundle in the products directory.
    for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
      directories.append(bundle.bundleURL.deletingLastPathComponent())
    }
    let packageRoot = URL(fileURLWithPath: sourceFile).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    for configuration in ["debug", "release"] {
      directories.append(packageRoot.appendingPathComponent(".build").appendingPathComponent(configuration))
    }
    return directories
  }

  /// - Throws: `CrashWriterFailure` naming every place looked in when the executable is missing.
  static func locate() throws -> URL {
    let environment = ProcessInfo.processInfo.environment
    if let override = environment["CASK_CRASH_WRITER"] {
      guard FileManager.default.isExecutableFile(atPath: override) else {
        throw CrashWriterFailure(description: "CASK_CRASH_WRITER=\(override) is not an executable file")
      }
      return URL(fileURLWithPath: override)
    }
    let directories = candidateDirectories()
    for directory in directories {
      let candidate = directory.appendingPathComponent(name)
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw CrashWriterFailure(
      description: "the crash test needs the \(name) executable, which `swift build --build-tests` (run by "
        + "`swift test`) builds beside the test bundle, but it is in none of: "
        + directories.map(\.path).joined(separator: ", ")
        + ". Build the package's tests with swift build --build-tests, or set CASK_CRASH_WRITER to its path.")
  }
}

import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

// Runs `cask-crash-writer` (Tests/CrashWriter) and kills it: shared by the engine's crash
// tests and the collections' (indexes after SIGKILL).

/// When to kill the writer: after its n-th acknowledgement (or right after start when `nil`),
/// plus a delay that lets it get into the middle of its next operation.
public struct KillPlan: Sendable {
  public var afterAcknowledgements: Int?
  public var delayMicroseconds: UInt32

  public init(afterAcknowledgements: Int?, delayMicroseconds: UInt32) {
    self.afterAcknowledgements = afterAcknowledgements
    self.delayMicroseconds = delayMicroseconds
  }

  /// A kill for one run of the writer, drawn from `random`: one run in eight dies during
  /// start-up (exec, open, recovery of the previous crash) within `startupMicroseconds`; the
  /// others after 1 to `acknowledgements` acknowledged writes (one run in five up to
  /// `rareAcknowledgements`) and a delay of up to 3 ms.
  public static func random(
    using random: inout SeededRandom, startupMicroseconds: UInt64, acknowledgements: UInt64,
    rareAcknowledgements: UInt64
  ) -> KillPlan {
    if random.next() % 8 == 0 {
      return KillPlan(afterAcknowledgements: nil, delayMicroseconds: UInt32(random.next() % startupMicroseconds))
    }
    let most = random.next() % 5 == 0 ? rareAcknowledgements : acknowledgements
    return KillPlan(
      afterAcknowledgements: Int(1 + random.next() % most), delayMicroseconds: UInt32(random.next() % 3_000))
  }
}

/// Thrown when the writer cannot be run, or does not behave as it should.
public struct CrashWriterFailure: Error, CustomStringConvertible {
  public var description: String

  public init(description: String) {
    self.description = description
  }
}

/// Runs `cask-crash-writer` once and kills it as planned.
public enum CrashWriterProcess {
  /// Kills a writer that never reaches its kill point, so that a hang fails instead of blocking.
  private final class Watchdog: Sendable {
    let finished = Atomic(false)
    let timedOut = Atomic(false)
  }

  /// How long a writer may take to reach the planned acknowledgement.
  public static let timeout: Double = 120

  /// - Returns: how many operations the writer acknowledged (operations `0..<n`).
  public static func run(binary: URL, arguments: [String], plan: KillPlan, log: String, context: String) throws -> Int {
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
public enum CrashWriterBinary {
  public static let name = "cask-crash-writer"

  /// The directories searched, most trusted first: where the running test binary is (the
  /// products directory of this very build, whatever its configuration or scratch path), then
  /// the package's `.build/debug` and `.build/release`, found from this source file.
  public static func candidateDirectories(sourceFile: String = #filePath) -> [URL] {
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
  public static func locate() throws -> URL {
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

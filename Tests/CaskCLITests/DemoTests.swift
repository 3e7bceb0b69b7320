import CipherCask
import Foundation
import Testing

/// `cask demo`: the quick start runs offline and leaves a store the other commands open.
@Suite("cask demo")
struct DemoTests {
  @Test("demo imports the sample, filters, updates, deletes and prints the stats")
  func demo() throws {
    let cask = try CaskRunner("demo")
    defer { cask.remove() }
    let result = try cask.run(["demo"])
    #expect(result.status == 0, "\(result.err)")
    #expect(result.stderr.isEmpty)
    let out = result.out
    #expect(out.contains("Password: 'cask-demo'"))
    #expect(
      out.contains(
        "1. Imported the bundled sample into the collection 'events' (one atomic batch): 300 inserted, 0 replaced."))
    #expect(out.contains("2. Filtered by city: 43 events in Lisbon"))
    #expect(out.contains("3. The venue 'Old Port Shed' is now 'Old Port Warehouse': 18 events updated"))
    #expect(out.contains("5. Everything on disk is encrypted: the word 'Lisbon' appears nowhere"))
    #expect(out.contains("Collections:  1\n  events: "))

    // The default directory, opened by the other commands with the printed password.
    let store = cask.path("cask-demo")
    let opened = try CaskStore(path: store, password: "cask-demo", options: CaskStore.Options(createIfMissing: false))
    let remaining = opened.count(inGroup: "events")
    try opened.close()
    #expect(remaining > 0 && remaining < 300)
    #expect(out.contains("; \(remaining) events remain."))
    let verify = try cask.run(["verify", "cask-demo"], password: "cask-demo")
    #expect(verify.status == 0)

    let again = try cask.run(["demo", "elsewhere"], password: "own-password")
    #expect(again.status == 0)
    #expect(!again.out.contains("Password:"))
    #expect(try cask.run(["keys", "elsewhere"], password: "own-password").status == 0)
    #expect(try cask.run(["keys", "elsewhere"], password: "cask-demo").status == 1)
  }
}

/// The commands `demo` prints at its end run as printed, however the tool was started.
@Suite("cask demo's hints")
struct DemoHintTests {
  /// The lines of the "Look around" list, without their indentation.
  private static func hints(_ out: String) -> [String] {
    guard let start = out.range(of: "Look around:\n") else { return [] }
    return out[start.upperBound...].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
  }

  /// Runs `line` with `/bin/sh` in the runner's directory, with `path` as `PATH`.
  private static func runHint(_ line: String, in cask: CaskRunner, path: String) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", line]
    process.currentDirectoryURL = URL(fileURLWithPath: cask.directory.path)
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("CASK_") }
    environment["PATH"] = path
    process.environment = environment
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }

  @Test("without cask on PATH the hints name the running executable, and each one runs")
  func hintsWithoutCaskOnPath() throws {
    let cask = try CaskRunner("demo-hints-path")
    defer { cask.remove() }
    let path = "/usr/bin:/bin"
    let result = try cask.run(["demo", "my demo"], environment: ["PATH": path])
    #expect(result.status == 0, "\(result.err)")
    let hints = Self.hints(result.out)
    #expect(hints.count == 4, "\(result.out)")
    let binary = try CaskRunner.binary()
    for hint in hints {
      #expect(hint.hasPrefix("CASK_PASSWORD=cask-demo \(binary) "), "\(hint)")
      #expect(try Self.runHint(hint, in: cask, path: path) == 0, "\(hint)")
    }
    #expect(hints.last == "CASK_PASSWORD=cask-demo \(binary) verify 'my demo'")
  }

  @Test("with this cask first on PATH the hints say cask, and each one runs")
  func hintsWithCaskOnPath() throws {
    let cask = try CaskRunner("demo-hints-bin")
    defer { cask.remove() }
    try FileManager.default.createDirectory(atPath: cask.path("bin"), withIntermediateDirectories: false)
    try FileManager.default.createSymbolicLink(atPath: cask.path("bin/cask"), withDestinationPath: CaskRunner.binary())
    let path = cask.path("bin") + ":/usr/bin:/bin"
    let result = try cask.run(["demo"], environment: ["PATH": path])
    #expect(result.status == 0, "\(result.err)")
    let hints = Self.hints(result.out)
    #expect(hints.count == 4, "\(result.out)")
    for hint in hints {
      #expect(hint.hasPrefix("CASK_PASSWORD=cask-demo cask "), "\(hint)")
      #expect(try Self.runHint(hint, in: cask, path: path) == 0, "\(hint)")
    }
  }
}

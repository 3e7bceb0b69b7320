import CaskTestSupport
import Foundation
import Testing

/// Replays every fuzz target's committed seeds and every input that once crashed a target
/// (`Tests/<Module>Tests/Regressions/fuzz-<target>/`) through the target's plain build, which
/// `swift test` builds beside the test bundle. A plain build has no libFuzzer: it runs each input
/// once through the same `LLVMFuzzerTestOneInput` body, whose invariants trap when one fails.
/// Under `swift test --sanitize=address` the replays run under AddressSanitizer too.
@Suite("Fuzz corpora and regressions")
struct FuzzRegressionTests {
  static let targets = [
    "rncryptor", "segment", "hint", "header", "checkpoint", "store", "import", "binary-decoder", "cli-args",
  ]

  /// The package root, found from this source file.
  static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  @Test(
    "every seed and every saved crash input runs through its fuzz target with every invariant holding",
    arguments: targets)
  func replay(target: String) throws {
    let name = "fuzz-\(target)"
    let binary = try Self.locate(name)
    var directories = [Self.packageRoot.appendingPathComponent("Fuzz/Corpus/\(target)").path]
    let tests = Self.packageRoot.appendingPathComponent("Tests")
    for module in try FileManager.default.contentsOfDirectory(atPath: tests.path).sorted() {
      let regressions = tests.appendingPathComponent("\(module)/Regressions/\(name)").path
      if FileManager.default.fileExists(atPath: regressions) { directories.append(regressions) }
    }
    let inputs = try directories.reduce(0) { $0 + (try FileManager.default.contentsOfDirectory(atPath: $1).count) }
    #expect(inputs > 0, "\(name) has no seeds in Fuzz/Corpus/\(target): run scripts/make-fuzz-corpus.sh")

    let (succeeded, text) = try Self.run(binary, directories)
    #expect(succeeded, "\(name) failed:\n\(text)")
    #expect(text.contains("\(name): \(inputs) inputs ran without a crash"), "\(name) output:\n\(text)")
  }

  /// The targets whose seeds `scripts/make-fuzz-corpus.sh` writes: every one but `store`, whose
  /// seeds are stores the engine wrote with a random data key and identity (made once).
  static let deterministicTargets = targets.filter { $0 != "store" }

  @Test(
    "the committed seeds are byte for byte what the target's corpus maker writes, so regenerating them changes nothing",
    arguments: deterministicTargets)
  func committedSeedsAreWhatTheCorpusMakerWrites(target: String) throws {
    let binary = try Self.locate("fuzz-\(target)")
    let directory = try TemporaryDirectory("fuzz-seeds")
    defer { directory.remove() }
    let made = directory.file(target)
    let (succeeded, text) = try Self.run(binary, ["--make-corpus", made])
    #expect(succeeded, "fuzz-\(target) --make-corpus failed:\n\(text)")
    let committed = Self.packageRoot.appendingPathComponent("Fuzz/Corpus/\(target)").path
    let names = try FileManager.default.contentsOfDirectory(atPath: committed).sorted()
    #expect(try FileManager.default.contentsOfDirectory(atPath: made).sorted() == names)
    for name in names {
      let differs =
        FileManager.default.contents(atPath: "\(made)/\(name)")
        != FileManager.default.contents(atPath: "\(committed)/\(name)")
      #expect(!differs, "fuzz-\(target)'s seed \(name) is not what --make-corpus writes")
    }
  }

  /// Runs `binary` with `arguments`, and `environment` added to this process's (the Swift
  /// runtime's backtracer off: a trap is expected of some runs); whether it exited 0, and its
  /// output.
  static func run(_ binary: URL, _ arguments: [String], environment: [String: String] = [:]) throws -> (
    succeeded: Bool, output: String
  ) {
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(
      environment.merging(["SWIFT_BACKTRACE": "enable=no"]) { given, _ in given }
    ) { _, added in added }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationReason == .exit && process.terminationStatus == 0, text)
  }

  /// The target's plain build, beside the test bundle like `cask-crash-writer`.
  static func locate(_ name: String) throws -> URL {
    let directories = CrashWriterBinary.candidateDirectories()
    for directory in directories {
      let candidate = directory.appendingPathComponent(name)
      if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
    }
    throw CrashWriterFailure(
      description: "\(name) is in none of \(directories.map(\.path).joined(separator: ", ")); "
        + "`swift build --build-tests` (run by `swift test`) builds it")
  }
}

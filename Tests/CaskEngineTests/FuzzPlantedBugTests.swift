import Foundation
import Testing

/// `fuzz-store` is shown to catch a bug planted on purpose: open trusting any checkpoint that
/// authenticates, without matching it against the log (`CASK_FUZZ_PLANT`, Docs/RELIABILITY.md).
/// The input is the seed `checkpoint-ahead-of-log`: a store the engine wrote, left open after a
/// checkpoint that covers part of the newest segment, with that segment cut before its first
/// record (as a crash before the log reached the disk would leave it, were the checkpoint not
/// bound to it): the engine ignores the checkpoint as ahead of the log; the planted bug serves
/// its keys, which open and `verify()` report nothing about and which do not read.
@Suite("Fuzz targets catch a planted bug")
struct FuzzPlantedBugTests {
  static let input = FuzzRegressionTests.packageRoot.appendingPathComponent(
    "Tests/CaskEngineTests/Regressions/planted-fuzz-store/checkpoint-ahead-of-log")

  @Test("fuzz-store traps on a checkpoint trusted blindly, and passes the same input without the planted bug")
  func checkpointTrustedBlindlyIsCaught() throws {
    let binary = try FuzzRegressionTests.locate("fuzz-store")
    let clean = try FuzzRegressionTests.run(binary, [Self.input.path])
    #expect(clean.succeeded, "fuzz-store failed without the planted bug:\n\(clean.output)")
    let planted = try FuzzRegressionTests.run(
      binary, [Self.input.path], environment: ["CASK_FUZZ_PLANT": "checkpoint-trusted-blindly"])
    #expect(!planted.succeeded, "fuzz-store missed the planted bug:\n\(planted.output)")
    #expect(
      planted.output.contains("fuzz invariant broken: open and verify() report nothing wrong"),
      "fuzz-store output:\n\(planted.output)")
  }
}

import CaskTestSupport
import Foundation
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
/// losing unsynced data is the business of GroupCommitTests. Odd runs write with `.never`,
/// where nothing is synced: what an acknowledged write copied into a segment's mapping or
/// wrote with `pwrite` must survive the kill all the same.
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
        let plan = KillPlan.random(
          using: &random, startupMicroseconds: 40_000, acknowledgements: 60, rareAcknowledgements: 300)
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

import CaskEngine
import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

/// Every crash state of a sync against a real Kinto on 127.0.0.1 (Docs/RELIABILITY.md, "Crash
/// states"): the pull stores each page of changes with the cursor that covers it in one
/// commit, so that in every state the cursor is never ahead of the objects it covers, the
/// device's queued changes are never lost, and the index equals the objects; and the
/// enumerator catches a pull that stores the cursor before its page, or one that overwrites
/// queued changes.
@Suite("Crash states of a sync")
struct KintoCrashStateTests {
  static let runner = CrashStateRunner.standard

  @Test("a pulled page and its cursor are one commit: no crash leaves the cursor ahead of its objects")
  func pageWithItsCursor() async throws {
    let kinto = try KintoProcess()
    let fixture = KintoCrashFixture(url: kinto.url, remote: "notes")
    let runner = Self.runner
    let (run, reports) = try await runOffThePool {
      let workload = fixture.workload
      let run = try runner.record(workload)
      let reports = try CrashPersistenceModel.allCases.map { try runner.check(run, of: workload, under: $0) }
      return (Recorded(run: run), reports)
    }
    // The start is what the workload is about: two pages of server changes (page size 2)
    // and three queued local changes; the sync committed each page, then its pushes.
    #expect(fixture.serverChanges.count == 4)
    #expect(run.commits >= 4, "the sync made \(run.commits) commits")
    for report in reports {
      print(report)
      #expect(report.states > 0)
      #expect(
        report.violationCount == 0,
        "\(report.workload) / \(report.model): \(report.violationCount) violations, e.g. \(report.violations)")
    }
  }

  @Test("the enumerator catches a cursor stored before its page, and queued changes overwritten by a pull")
  func plantedSyncBugs() async throws {
    let kinto = try KintoProcess()
    let cursorFirst = KintoCrashFixture(url: kinto.url, remote: "cursorfirst", plantCursorFirst: true)
    let lostUpdate = KintoCrashFixture(url: kinto.url, remote: "lostupdate", plantLostUpdate: true)
    // Narrow bounds (each crash point with its pending operations all kept or all lost): both
    // bugs show at whole commits, and the narrow run costs a fifth of a standard one.
    let runner = CrashStateRunner(bounds: CrashStateBounds(exhaustiveUpTo: 0, beyondExhaustive: 0, tearCuts: 0))
    let (cursorReports, lostReports) = try await runOffThePool {
      (
        try runner.run(cursorFirst.workload, models: [.posixMinimum]),
        try runner.run(lostUpdate.workload, models: [.posixMinimum])
      )
    }
    for report in cursorReports {
      print(report)
      print("[crash-states] planted cursor-first pull caught, e.g. \(report.violations.prefix(2))")
      #expect(report.violations.contains { $0.contains("the cursor covers") }, "\(report.violations)")
    }
    for report in lostReports {
      print(report)
      #expect(report.violations.contains { $0.contains("queued local change to n1 is lost") }, "\(report.violations)")
    }
  }
}

/// What the test reads of a recording, handed back from the enumerator's thread.
struct Recorded: Sendable {
  /// Commits the sync step noted.
  var commits: Int

  init(run: CrashStateRunner.Run) {
    commits = run.intermediates.last { !$0.isEmpty }?.count ?? 0
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Kills a real writer with SIGKILL at seeded random points of a streamed import into an
/// indexed collection (`cask-crash-writer --streamed-import`), run after run on one store whose
/// segment limit the import's batch exceeds. After every kill the reopened store must hold the
/// import whole if it returned, nothing of it if it had not read its last object, and one of
/// the two otherwise; every acknowledged save; clean `verify()` and indexes that agree with the
/// objects. `CASK_TEST_SEED` replays a run, `CASK_TEST_ITERATIONS` makes it longer.
@Suite("Streamed imports killed with SIGKILL")
struct StreamedImportKillTests {
  static let password = "streamed-kill"
  static let indexes: [CaskIndex<CrashItem>] = [
    .index("owner", \.owner), .index("rank", \.rank), .index("tag", each: \.tags), .unique("email", \.email),
  ]

  @Test("SIGKILL during a streamed import leaves none of it or all of it, and a store that verifies clean")
  func killDuringImport() throws {
    let writer = try CrashWriterBinary.locate()
    var random = SeededRandom.make(test: "streamed-import-kill")
    let seed = random.next()
    try withTemporaryDirectory("streamed-kill") { directory throws in
      let path = directory.file("store.cask")
      try CaskStore(path: path, password: Self.password, options: CaskStore.Options(durability: .never)).close()
      var expected: [String: CrashItem] = [:]
      var committedRuns = 0
      let runs = testIterations(6)
      for run in 0..<runs {
        let objects = 1_500
        let limits: [UInt64] = [8 << 10, 32 << 10]
        let segmentLimit = limits[Int(random.next() % UInt64(limits.count))]
        // Acknowledgements: 0 the save, 1...objects the import's progress, objects + 1 its return.
        // One run in three dies around the commit: after the last object or after the return.
        let plan =
          random.next() % 3 == 0
          ? KillPlan(
            afterAcknowledgements: objects + 1 + Int(random.next() % 2),
            delayMicroseconds: UInt32(random.next() % 3_000))
          : KillPlan.random(
            using: &random, startupMicroseconds: 60_000, acknowledgements: UInt64(objects + 2),
            rareAcknowledgements: UInt64(objects + 2))
        let context = "run \(run) of seed \(seed) (CASK_TEST_SEED replays the whole test)"
        let count = try CrashWriterProcess.run(
          binary: writer,
          arguments: ["--streamed-import", path, Self.password, String(run), String(objects), String(segmentLimit)],
          plan: plan, log: directory.file("writer-\(run).log"), context: context)
        let found = try Self.checkStore(at: path, context: context)
        var withBase = expected
        let base = StreamedImportObjects.base(run: run)
        if count >= 1 || found[base.id] != nil { withBase[base.id] = base }
        var withImport = withBase
        for item in StreamedImportObjects.make(run: run, count: objects) { withImport[item.id] = item }
        let imported = found["r\(run)-1"] != nil
        if count == objects + 2 {
          #expect(found == withImport, "\(context): the import returned but is not all there")
        } else if count < objects + 1 {
          #expect(found == withBase, "\(context): killed after \(count) acknowledgements, before the import's end")
        } else {
          #expect(found == withBase || found == withImport, "\(context): part of the import is there")
        }
        if imported { committedRuns += 1 }
        expected = imported ? withImport : withBase
        if found != expected { return }
      }
      print("[streamed-import-kill] \(runs) kills, \(committedRuns) imports found committed, \(expected.count) objects")
    }
  }

  /// Opens the store after a kill, checks it and its indexes, and returns the objects by id.
  private static func checkStore(at path: String, context: String) throws -> [String: CrashItem] {
    let store = try CaskStore(
      path: path, password: password, options: CaskStore.Options(durability: .never, autoCompaction: nil))
    defer { try? store.close() }
    #expect(store.stats().recovery.corruptRegions.isEmpty, "damage after \(context)")
    #expect(try store.verify().isClean, "verify after \(context)")
    let items = store.collection(CrashItem.self, named: StreamedImportObjects.collection, indexes: indexes)
    let objects = try items.all()
    let report = try items.verifyIndexes()
    #expect(report.isConsistent, "indexes and objects disagree after \(context): \(report)")
    for check in try store.checkIndexEntries() { #expect(check.isClean, "index check after \(context): \(check)") }
    for object in objects {
      #expect(try items.query().where(\.email, equals: object.email).ids() == [object.id], "e-mail, \(context)")
    }
    return Dictionary(uniqueKeysWithValues: objects.map { ($0.id, $0) })
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Kills a real writer process with SIGKILL at seeded random moments while it saves, updates,
/// deletes and batches through a collection with declared indexes (one unique) under
/// `.always`, many times on the same store; after every kill the reopened store must hold
/// every acknowledged write, and its indexes must agree with its objects.
///
/// The writer is `cask-crash-writer --collection` (Tests/CrashWriter/CollectionWriter.swift),
/// built by `swift build --build-tests` beside the test bundle. `CASK_TEST_SEED` replays a run,
/// `CASK_TEST_ITERATIONS` makes it longer. Power loss is the business of IndexCrashTests.
@Suite("Secondary indexes after SIGKILL of a real writer")
struct IndexKillRecoveryTests {
  static let password = "index-kill"

  /// The writer's indexes (`CollectionWriter.indexes`): the same list, or the open would see a
  /// changed definition and rebuild.
  static let indexes: [CaskIndex<CrashItem>] = [
    .index("owner", \.owner), .index("rank", \.rank), .index("tag", each: \.tags), .unique("email", \.email),
  ]

  @Test("SIGKILL during indexed writes never loses an acknowledged write nor leaves indexes and objects apart")
  func killIndexedWritesRepeatedly() throws {
    let writer = try CrashWriterBinary.locate()
    var random = SeededRandom.make(test: "index-kill")
    let seed = random.next()
    try withTemporaryDirectory("index-kill") { directory throws in
      let path = directory.file("store.cask")
      try CaskStore(path: path, password: Self.password, options: CaskStore.Options(durability: .never)).close()

      var model: [String: CrashItem] = [:]
      var acknowledged = 0
      var inFlightApplied = 0
      let runs = testIterations(8)
      for run in 0..<runs {
        let limits: [UInt64] = [4 << 10, 16 << 10, 64 << 10]
        let segmentLimit = limits[Int(random.next() % UInt64(limits.count))]
        // Start-up kills also land in the loading of the indexes.
        let plan = KillPlan.random(
          using: &random, startupMicroseconds: 60_000, acknowledgements: 40, rareAcknowledgements: 120)
        let context = "run \(run) of seed \(seed) (CASK_TEST_SEED replays the whole test)"
        let count = try CrashWriterProcess.run(
          binary: writer,
          arguments: ["--collection", path, Self.password, String(seed), String(run), String(segmentLimit)],
          plan: plan, log: directory.file("writer-\(run).log"), context: context)
        acknowledged += count

        var workload = CollectionCrashWorkload(seed: seed, run: run)
        for _ in 0..<count { CollectionCrashWorkload.apply(workload.next(), to: &model) }
        var withInFlight = model
        CollectionCrashWorkload.apply(workload.next(), to: &withInFlight)
        let found = try Self.checkStore(at: path, context: context)
        if found == model {
          continue
        } else if found == withInFlight {
          model = withInFlight
          inFlightApplied += 1
        } else {
          Issue.record(
            Comment(
              rawValue: "after \(context), killed after \(count) acknowledged operations, the collection holds "
                + "neither the acknowledged state nor that plus the operation in flight:\n"
                + Self.difference(expected: model, found: found)))
          return
        }
      }
      #expect(try Self.checkStore(at: path, context: "final open of seed \(seed)") == model)
      print(
        "[index-kill] \(runs) kills, \(acknowledged) acknowledged operations, "
          + "\(inFlightApplied) in-flight operations found applied, \(model.count) objects at the end")
    }
  }

  /// Opens the store after a kill, checks that the engine is clean and that every index agrees
  /// with the objects (stored entries, in-memory entries, query answers), and returns the
  /// collection's objects by id.
  private static func checkStore(at path: String, context: String) throws -> [String: CrashItem] {
    let store = try CaskStore(
      path: path, password: password, options: CaskStore.Options(durability: .never, autoCompaction: nil))
    defer { try? store.close() }
    let health = try store.verify()
    #expect(health.isClean, "verify after \(context): \(health.damage)")
    let items = store.collection(CrashItem.self, named: CollectionCrashWorkload.collection, indexes: indexes)
    let objects = try items.all()
    let report = try items.verifyIndexes()
    #expect(report.isConsistent, "indexes and objects disagree after \(context): \(report)")
    #expect(report.objects == objects.count, "verifyIndexes saw another number of objects after \(context)")
    for check in try store.checkIndexEntries() {
      #expect(check.isClean, "the store's index check after \(context): \(check)")
    }
    func sortedIDs(_ ids: [String]) -> [String] { ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) } }
    for owner in CollectionCrashWorkload.owners {
      let expected = sortedIDs(objects.filter { $0.owner == owner }.map(\.id))
      #expect(sortedIDs(try items.query().where(\.owner, equals: owner).ids()) == expected, "owner, \(context)")
    }
    for tag in CollectionCrashWorkload.tagWords {
      let expected = sortedIDs(objects.filter { $0.tags.contains(tag) }.map(\.id))
      #expect(sortedIDs(try items.query().where(\.tags, contains: tag).ids()) == expected, "tag, \(context)")
    }
    let ranked = objects.filter { (10..<20).contains($0.rank) }.count
    #expect(try items.query().where(\.rank, in: 10..<20).count() == ranked, "rank range, \(context)")
    for object in objects {
      #expect(
        try items.query().where(\.email, equals: object.email).ids() == [object.id], "unique e-mail, \(context)")
    }
    return Dictionary(uniqueKeysWithValues: objects.map { ($0.id, $0) })
  }

  /// Which ids differ, with the origin (run.index.step) of each side's object.
  private static func difference(expected: [String: CrashItem], found: [String: CrashItem]) -> String {
    func label(_ item: CrashItem?) -> String {
      guard let item else { return "absent" }
      return "\(item.origin) (owner \(item.owner), rank \(item.rank), tags \(item.tags))"
    }
    return Set(expected.keys).union(found.keys).sorted().filter { expected[$0] != found[$0] }.map {
      "  \($0): expected \(label(expected[$0])), found \(label(found[$0]))"
    }.joined(separator: "\n")
  }
}

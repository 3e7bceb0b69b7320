import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Power loss at random points of collection writes and index builds, on a file system that
/// keeps only what was synced (and a random prefix of the rest): after each crash, the
/// reopened store's indexes agree with its objects.
@Suite("Secondary indexes after power loss")
struct IndexCrashTests {
  private static let path = "/data/s.cask"

  private func open(_ fileSystem: FaultyFileSystem, durability: CaskStore.Durability) throws -> CaskStore {
    try CaskStore(
      path: Self.path, password: "pw",
      options: .init(durability: durability, segmentSizeLimit: 4096, autoCompaction: nil, fileSystem: fileSystem))
  }

  /// Every query answer the indexes give equals the brute-force answer over the objects.
  private func expectAgreement(_ gigs: CaskCollection<Gig>, _ context: String) throws {
    let all = try gigs.all()
    for city in ["Lisbon", "Porto", "Faro"] {
      let expected = all.filter { $0.city == city }.map(\.id).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
      #expect(try gigs.query().where(\.city, equals: city).ids() == expected, "\(context)")
    }
    let report = try gigs.verifyIndexes()
    #expect(report.isConsistent, "\(context): \(report)")
    #expect(report.indexes.count == 8, "\(context): every index checked")
  }

  private func randomWrite(_ gigs: CaskCollection<Gig>, _ store: CaskStore, _ random: inout SeededRandom) throws {
    let id = "g\(Int.random(in: 0..<20, using: &random))"
    let city = ["Lisbon", "Porto", "Faro"].randomElement(using: &random)!
    switch Int.random(in: 0..<4, using: &random) {
    case 0: try gigs.save(.make(id, city: city, seats: Int.random(in: 0...50, using: &random)))
    case 1: try gigs.update(id: id) { $0.city = city }
    case 2: try gigs.delete(id: id)
    default:
      try store.batch { batch in
        for n in 0..<3 { try batch.save(.make("g\((Int(id.dropFirst())! + n) % 20)", city: city), in: gigs) }
      }
    }
  }

  @Test("writes cut by power loss, with .always and .never: indexes and objects agree after reopen")
  func powerLossDuringWrites() throws {
    var random = SeededRandom.make(test: "IndexCrashTests writes")
    for durability in [CaskStore.Durability.always, .never] {
      for iteration in 0..<testIterations(4) {
        var fileSystem = FaultyFileSystem(directories: ["/data"])
        var store = try open(fileSystem, durability: durability)
        for crash in 0..<4 {
          let context = "\(durability) iteration \(iteration) crash \(crash)"
          fileSystem.scheduleCrash(afterMutations: Int.random(in: 1...80, using: &random))
          let gigs = store.gigs()
          for _ in 0..<40 {
            do { try randomWrite(gigs, store, &random) } catch { break }
            if fileSystem.isPoweredOff { break }
          }
          try? store.close()
          fileSystem = fileSystem.crash(using: &random)
          store = try open(fileSystem, durability: durability)
          try expectAgreement(store.gigs(), context)
        }
        try store.close()
      }
    }
  }

  @Test("an index build cut by power loss is never used half-built and completes when run again")
  func powerLossDuringBuild() throws {
    var random = SeededRandom.make(test: "IndexCrashTests build")
    for iteration in 0..<testIterations(6) {
      var fileSystem = FaultyFileSystem(directories: ["/data"])
      var store = try open(fileSystem, durability: .always)
      let plain = store.collection(Gig.self, named: "late")
      try plain.save(
        contentsOf: (0..<30).map { Gig.make("g\($0)", city: $0 % 3 == 0 ? "Lisbon" : "Porto", seats: $0) })
      fileSystem.scheduleCrash(afterMutations: Int.random(in: 1...40, using: &random))
      let indexed = store.collection(Gig.self, named: "late", indexes: [.index("city", \.city)])
      _ = try? indexed.buildIndexes(chunkSize: 4)
      try? store.close()
      fileSystem = fileSystem.crash(using: &random)
      store = try open(fileSystem, durability: .always)
      let reopened = store.collection(Gig.self, named: "late", indexes: [.index("city", \.city)])
      let ready = try reopened.readyIndexes()
      // Ready only if the build's last commit survived; otherwise queries scan, correctly.
      let lisbon = try reopened.query().where(\.city, equals: "Lisbon").count()
      #expect(lisbon == 10, "iteration \(iteration), ready before query: \(ready)")
      #expect(try reopened.readyIndexes() == ["city"])
      let report = try reopened.verifyIndexes()
      #expect(report.isConsistent, "iteration \(iteration): \(report)")
      try store.close()
    }
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `CaskStore.upgrade(at:password:)` on the real file system (`renameat2(RENAME_EXCHANGE)`),
/// with typed collections: their objects and index entries come through whole.
@Suite("Upgrading a store with collections and indexes")
struct UpgradeCollectionTests {
  @Test("objects, plain keys and index entries read the same after an upgrade from version 2")
  func collectionsSurviveTheUpgrade() throws {
    let directory = try TemporaryDirectory("upgrade-collections")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    var options = testStoreOptions
    options.newStoreFormatVersion = 2
    let gigs = (0..<30).map {
      Gig.make("g\($0)", city: ["Lisbon", "Porto", "Faro"][$0 % 3], seats: $0, email: "\($0)@x")
    }
    let store = try CaskStore(path: path, password: "pw", options: options)
    try store.gigs().save(contentsOf: gigs)
    try store.gigs().delete(id: "g4")
    try store.put(Data("plain".utf8), forKey: "plain")
    let porto = try store.gigs().query().where(\.city, equals: "Porto").ids()
    let keys = try store.keys().sorted()
    try store.close()

    let report = try CaskStore.upgrade(at: path, password: "pw")
    #expect(report.upgraded && report.version == CaskFormat.formatVersion)
    #expect(report.keys == keys.count)
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    #expect(names == ["s.cask"], "left beside the store: \(names)")

    let upgraded = try CaskStore(path: path, password: "pw", options: testStoreOptions)
    defer { try? upgraded.close() }
    #expect(try upgraded.keys().sorted() == keys)
    #expect(try upgraded.get("plain") == Data("plain".utf8))
    let collection = upgraded.gigs()
    #expect(try collection.all().sorted { $0.id < $1.id } == gigs.filter { $0.id != "g4" }.sorted { $0.id < $1.id })
    #expect(try collection.query().where(\.city, equals: "Porto").ids() == porto)
    #expect(try collection.verifyIndexes().isConsistent)
    #expect(throws: (any Error).self) { try collection.save(Gig.make("dup", email: "1@x")) }
  }
}

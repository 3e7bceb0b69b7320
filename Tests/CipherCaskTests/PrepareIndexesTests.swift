import CaskTestSupport
import Foundation
import Testing

@testable import CipherCask

/// `prepareIndexes()` moves what the first save of a stored object after opening costs (loading
/// every declared index's entries) to a moment the app chooses. A save of a new object loads
/// only the unique indexes: it has no old entries to find.
@Suite("Preparing indexes at launch")
struct PrepareIndexesTests {
  private func loadedGroups(_ store: CaskStore) -> Int {
    IndexRuntime.of(store).state.withLock { $0.caches.count }
  }

  @Test(
    "after prepareIndexes every index is in memory; without it a new object's save loads the unique ones, an update all"
  )
  func prepareLoadsWhatTheFirstSaveWould() throws {
    let directory = try TemporaryDirectory("prepare-indexes")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    do {
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      try store.gigs().save(contentsOf: (0..<30).map { Gig.make("g\($0)", city: "c\($0 % 4)") })
    }
    let declared = 8
    let unique = 1
    do {
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      defer { try? store.close() }
      let gigs = store.gigs()
      #expect(loadedGroups(store) == 0)
      try gigs.save(.make("first"))
      #expect(loadedGroups(store) == unique, "a new object's save loads only what checks its unique values")
      try gigs.save(.make("g3", city: "c0"))
      #expect(loadedGroups(store) == declared, "an update finds its old entries in every index")
      #expect(try gigs.verifyIndexes().isConsistent)
    }
    let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    let gigs = store.gigs()
    try gigs.prepareIndexes()
    #expect(loadedGroups(store) == declared)
    try gigs.save(.make("second", city: "c1"))
    #expect(try gigs.query().where(\.city, equals: "c1").count() == 9)
    #expect(try gigs.verifyIndexes().isConsistent)
  }
}

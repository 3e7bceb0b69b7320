import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CaskEngine

/// A collection whose name is invalid (empty, or holding U+0000) refuses every throwing call,
/// even one with nothing to do, and its change stream sees no object of another collection.
@Suite("A collection with an invalid name refuses every call and sees nothing of others")
struct InvalidCollectionNameTests {
  struct Item: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var value: Int
  }

  @Test("save(contentsOf:) of no objects on a collection with an invalid name throws invalidKey")
  func emptySaveOnBadNameIsRefused() throws {
    try withStore { store throws in
      for name in ["", "Item\u{0}x"] {
        let bad = store.collection(Item.self, named: name)
        #expect(throws: CaskError.self, "name \(name.debugDescription)") { try bad.save(contentsOf: [Item]()) }
        // "every throwing call on such a collection throws CaskError.invalidKey" (GUIDE.md, section 1)
        do {
          _ = try bad.importJSON(Data("[{".utf8))
          Issue.record("importJSON was not refused")
        } catch let error as CaskError {
          if case .invalidKey = error {} else { Issue.record("importJSON on name \(name.debugDescription): \(error)") }
        }
      }
    }
  }

  @Test("changes() of a collection with an invalid name reports no object of another collection")
  func badNameStreamSeesNoOtherCollection() async throws {
    try await withStore { store in
      let good = store.collection(Item.self, named: "Item")
      let bad = store.collection(Item.self, named: "Item\u{0}x")
      let collector = ChangeCollector(bad.changes())
      let control = ChangeCollector(good.changes())
      try await good.save(Item(id: "x\u{0}secret", value: 1))
      _ = await control.wait(for: 1)
      _ = await collector.wait(for: 1, seconds: 3)
      #expect(collector.changes.isEmpty, "got \(collector.changes.map(\.inserted))")
      await collector.cancel()
      await control.cancel()
    }
  }

  @Test("count of a collection named \"\" is 0 even when the store holds a key that starts with U+0000")
  func emptyNameCountsNothing() throws {
    try withStore { store throws in
      try store.put(Data("raw".utf8), forKey: "\u{0}raw")
      #expect(store.collection(Item.self, named: "").count == 0)
    }
  }

}

import CaskTestSupport
import Foundation
import RNCryptorCodec
import Testing

@testable import CaskEngine

/// Attached keys in a store opened from a checkpoint, whose tables load page by page: replacing
/// an owner's set reads the owner's record, and never walks (so loads) every table first.
@Suite("Attached keys with the directory loaded page by page")
struct AttachedKeyLazyLoadTests {
  typealias Fixture = AttachedKeyFixture

  /// The group tables of `store`'s directory not yet loaded whole (the objects', and the two
  /// groups of attached keys).
  private static func partlyLoadedTables(_ store: CaskStore) -> Int {
    store.state.withLock { state in state.directory.groups.tables.filter { !$0.isFullyLoaded }.count }
  }

  @Test("the first writes after opening from a checkpoint replace attached keys without loading every page")
  func firstWritesStayLazy() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      var options = Fixture.options
      options.checkpoints = CaskStore.Checkpoints(minimumKeys: 1)
      var store = try Fixture.open(path, keys: keys, options: options)
      var model = AttachedKeyModel()
      for number in 0..<6_000 {
        let value = Data((number % 2 == 0 ? "a,xa" : "b").utf8)
        try store.put(value, forKey: Fixture.objectKey("\(number)"))
        model.put(value, forKey: Fixture.objectKey("\(number)"))
      }
      try store.close()

      store = try Fixture.open(path, keys: keys, options: options)
      #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
      #expect(Self.partlyLoadedTables(store) == 3, "the tables were loaded at open")
      try store.put(Data("b".utf8), forKey: Fixture.objectKey("10"))
      model.put(Data("b".utf8), forKey: Fixture.objectKey("10"))
      try store.delete(Fixture.objectKey("12"))
      model.delete(Fixture.objectKey("12"))
      try store.put(Data("a".utf8), forKey: Fixture.objectKey("11"))
      model.put(Data("a".utf8), forKey: Fixture.objectKey("11"))
      #expect(Self.partlyLoadedTables(store) > 0, "the first writes loaded every page of every table")

      #expect(try !store.contains(Fixture.entryKey("a", "10")))
      #expect(try !store.contains(Fixture.entryKey("xa", "10")))
      #expect(try store.contains(Fixture.entryKey("b", "10")))
      #expect(try !store.contains(Fixture.entryKey("xa", "12")))
      #expect(try !store.contains(Fixture.entryKey("b", "11")))
      #expect(try Fixture.contents(store) == model.values)
      try store.close()
      store = try Fixture.open(path, keys: keys, options: options)
      #expect(try Fixture.contents(store) == model.values)
      #expect(try store.verify().isClean)
      try store.close()
    }
  }
}

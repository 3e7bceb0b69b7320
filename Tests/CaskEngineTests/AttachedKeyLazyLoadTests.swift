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

  /// Whether `store`'s directory knows that no record carries attached keys.
  private static func knowsNoOwners(_ store: CaskStore) -> Bool {
    store.state.withLock { $0.directory.attachedOwnersKnown && $0.directory.attachedOwners.isEmpty }
  }

  @Test("a store without attached keys opens from its checkpoint knowing that no record carries any")
  func noAttachedKeysIsKnownFromTheCheckpoint() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      var store = try CheckpointFixture.open(path)
      var model = try CheckpointFixture.fill(store, count: 400, seed: 7)
      try store.close()

      store = try CheckpointFixture.open(path)
      #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
      #expect(Self.knowsNoOwners(store), "every put and delete would read the record it replaces")
      for number in stride(from: 1, to: 400, by: 7) {
        let key = "key-\(number)"
        #expect(try store.delete(key) == (model.removeValue(forKey: key) != nil))
        try store.put(Data("new".utf8), forKey: "users\u{0}\(number * 3)")
        model["users\u{0}\(number * 3)"] = Data("new".utf8)
      }
      #expect(try CheckpointFixture.contents(of: store) == model)
      try store.close()
      store = try CheckpointFixture.open(path)
      defer { try? store.close() }
      #expect(try CheckpointFixture.contents(of: store) == model)
      #expect(try store.verify().isClean)
    }
  }

  @Test("a store with attached keys opens from its checkpoint reading replaced records' sections")
  func attachedKeysAreNotAssumedAway() throws {
    try withTemporaryDirectory { directory in
      let path = directory.file("store")
      let keys = try RNCryptor.Keys.random()
      var options = Fixture.options
      options.checkpoints = CaskStore.Checkpoints(minimumKeys: 1)
      var store = try Fixture.open(path, keys: keys, options: options)
      var model = AttachedKeyModel()
      for number in 0..<50 {
        try store.put(Data("a,xa".utf8), forKey: Fixture.objectKey("\(number)"))
        model.put(Data("a,xa".utf8), forKey: Fixture.objectKey("\(number)"))
      }
      try store.close()

      store = try Fixture.open(path, keys: keys, options: options)
      defer { try? store.close() }
      #expect(store.stats().recovery.segmentsFromCheckpoint > 0)
      #expect(!Self.knowsNoOwners(store))
      #expect(try store.delete(Fixture.objectKey("3")))
      model.delete(Fixture.objectKey("3"))
      #expect(try !store.contains(Fixture.entryKey("a", "3")))
      #expect(try Fixture.contents(store) == model.values)
    }
  }
}

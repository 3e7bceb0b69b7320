import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine
@testable import CipherCask

/// Declaring a collection begins reading its catalogue of indexes on a background thread, so
/// that the first save or query after open finds it read; a read that a commit changing a
/// catalogue overtook is never used.
@Suite("The catalogue read ahead at declaration")
struct CatalogReadAheadTests {
  struct Event: Codable, Identifiable, Sendable, Equatable {
    var id: String
    var city: String
  }

  static let indexes: [CaskIndex<Event>] = [.index("city", \.city)]
  static let options = CaskStore.Options(durability: .never, autoCompaction: nil)
  static let keys = try! RNCryptor.Keys(
    encryptionKey: Data(repeating: 0x31, count: 32), hmacKey: Data(repeating: 0x32, count: 32))

  /// A store of 20 indexed events, closed: its catalogue lists the index as ready.
  static func makeStore(at path: String) throws {
    let store = try CaskStore(path: path, keys: keys, options: options)
    let events = store.collection(Event.self, named: "events", indexes: indexes)
    try events.save(contentsOf: (0..<20).map { Event(id: "e\($0)", city: $0 % 2 == 0 ? "Porto" : "Faro") })
    try store.close()
  }

  /// The read begun for "events" at its declaration, once it has run (waiting up to 10 s).
  static func finishedRead(in store: CaskStore) throws -> IndexRuntime.CatalogRead {
    let runtime = IndexRuntime.of(store)
    let read = try #require(runtime.state.withLock { $0.catalogReads[ByteString("events")] })
    let deadline = Date().addingTimeInterval(10)
    while !read.isDone && Date() < deadline { usleep(1_000) }
    #expect(read.isDone)
    return read
  }

  /// The store `makeStore` made, opened again with "events" declared, and the catalogue read
  /// its declaration began, once it has run.
  static func reopenedWithFinishedRead(at path: String) throws -> (
    store: CaskStore, events: CaskCollection<Event>, read: IndexRuntime.CatalogRead
  ) {
    let store = try CaskStore(path: path, keys: keys, options: options)
    let events = store.collection(Event.self, named: "events", indexes: indexes)
    return (store, events, try finishedRead(in: store))
  }

  @Test("the first save uses the catalogue read in the background, and every index keeps the save")
  func firstSaveUsesTheRead() throws {
    try withTemporaryDirectory("catalog-read-ahead") { directory in
      let path = directory.file("store")
      try Self.makeStore(at: path)
      let (store, events, read) = try Self.reopenedWithFinishedRead(at: path)
      defer { try? store.close() }
      // Read by the background thread: a read here would have no catalogue.
      let readAhead = try #require(read.take { nil })
      #expect(readAhead["city"]?.state == .ready)
      try events.save(Event(id: "new", city: "Faro"))
      let runtime = IndexRuntime.of(store)
      #expect(runtime.state.withLock { $0.catalogReads.isEmpty })
      #expect(runtime.state.withLock { $0.catalogs[ByteString("events")] } != nil)
      #expect(try events.readyIndexes() == ["city"])
      #expect(try events.query().where(\.city, equals: "Faro").count() == 11)
    }
  }

  @Test("a catalogue changed after the read began is read again, never taken from the read")
  func changedCatalogueIsReadAgain() throws {
    try withTemporaryDirectory("catalog-read-overtaken") { directory in
      let path = directory.file("store")
      try Self.makeStore(at: path)
      let (store, events, read) = try Self.reopenedWithFinishedRead(at: path)
      defer { try? store.close() }
      #expect(read.take { nil }?["city"]?.state == .ready)
      // The catalogue goes after the read: nothing is ready any more.
      try store.delete(IndexStoreKeys.catalogKey(collection: "events"))
      #expect(try events.readyIndexes() == [])
    }
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// Sync on a collection with secondary indexes: what a pull stores, deletes or keeps in
/// conflict is in the indexes in the same commit, queries answer exactly what a scan finds,
/// and a pulled object that breaks a unique index stops the sync before anything of its page
/// is stored (never an object the indexes miss).
final class KintoIndexedSyncTests: XCTestCase {
  /// The notes of `store` with an index on the title and a unique one on the count.
  private static func indexedNotes(_ store: CaskStore) -> CaskCollection<Note> {
    store.collection(Note.self, named: "notes", indexes: [.index("title", \.title), .unique("count", \.count)])
  }

  /// A device whose collection has the indexes, synced with `url` (in plain mode, or end to end).
  private static func indexedDevice(
    _ name: String, url: URL, passphrase: String? = nil
  ) throws -> (TemporaryDirectory, CaskStore, CaskCollection<Note>, CaskSync<Note>) {
    let directory = try TemporaryDirectory("kinto-indexed-\(name)")
    let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    let notes = indexedNotes(store)
    let sync = try Device.makeSync(
      notes, url: url, passphrase: passphrase, retry: RetryPolicy(attempts: 3, baseDelay: 0.05))
    return (directory, store, notes, sync)
  }

  /// Fails unless every index agrees with the objects and each title query returns exactly
  /// what a scan with the same condition returns.
  private func assertIndexesExact(
    _ notes: CaskCollection<Note>, titles: [String], file: StaticString = #filePath,
    line: UInt = #line
  ) throws {
    let verification = try notes.verifyIndexes()
    XCTAssertTrue(verification.isConsistent, "indexes disagree: \(verification)", file: file, line: line)
    for title in titles {
      let indexed = try notes.query().where(\.title, equals: title).fetch().map(\.id).sorted()
      let scanned = try notes.filter { $0.title == title }.map(\.id).sorted()
      XCTAssertEqual(indexed, scanned, "title '\(title)'", file: file, line: line)
    }
  }

  func testPullsDeletionsAndConflictsKeepTheIndexes() async throws {
    for passphrase in [nil, "a shared phrase"] {
      let kinto = try KintoProcess()
      let (phoneDirectory, phoneStore, phoneNotes, phone) = try Self.indexedDevice(
        "phone", url: kinto.url, passphrase: passphrase)
      defer {
        try? phoneStore.close()
        phoneDirectory.remove()
      }
      let (laptopDirectory, laptopStore, laptopNotes, laptop) = try Self.indexedDevice(
        "laptop", url: kinto.url, passphrase: passphrase)
      defer {
        try? laptopStore.close()
        laptopDirectory.remove()
      }
      for index in 0..<30 {
        try synchronously {
          try phoneNotes.save(Note(id: "n\(index)", title: index % 3 == 0 ? "red" : "blue", count: index))
        }
      }
      let pushed = try await phone.sync()
      XCTAssertEqual(pushed.pushed, 30)
      let pulled = try await laptop.sync()
      XCTAssertEqual(pulled.pulled, 30)
      try assertIndexesExact(laptopNotes, titles: ["red", "blue", "green"])
      XCTAssertEqual(try synchronously { try laptopNotes.query().where(\.count, equals: 9).fetch().map(\.id) }, ["n9"])

      // The phone renames, deletes and adds; the laptop changes one of the renamed notes too.
      for index in 0..<6 {
        try synchronously { try phoneNotes.save(Note(id: "n\(index)", title: "green", count: index)) }
      }
      for index in 6..<9 { XCTAssertTrue(try synchronously { try phoneNotes.delete(id: "n\(index)") }) }
      try synchronously {
        try phoneNotes.save(Note(id: "n100", title: "green", count: 100))
        try laptopNotes.save(Note(id: "n1", title: "laptop", count: 1))
      }
      _ = try await phone.sync()
      let merged = try await laptop.sync(conflicts: .serverWins)
      XCTAssertEqual(merged.deleted, 3)
      XCTAssertNil(try synchronously { try laptopNotes.get(id: "n7") })
      XCTAssertEqual(try synchronously { try laptopNotes.get(id: "n1")?.title }, "green")
      try assertIndexesExact(laptopNotes, titles: ["red", "blue", "green", "laptop"])
      XCTAssertEqual(try synchronously { try laptopNotes.query().where(\.title, equals: "green").count() }, 7)
      XCTAssertEqual(try synchronously { try laptopNotes.query().where(\.count, equals: 7).fetch().count }, 0)

      // A later process declares the same indexes: nothing to rebuild, nothing missing.
      try laptopStore.close()
      let reopened = try CaskStore(
        path: laptopDirectory.file("s.cask"), password: "pw", options: .init(durability: .never))
      defer { try? reopened.close() }
      try assertIndexesExact(Self.indexedNotes(reopened), titles: ["red", "blue", "green", "laptop"])
    }
  }

  func testAPulledObjectThatBreaksAUniqueIndexStopsTheSyncAndStoresNothingOfItsPage() async throws {
    let kinto = try KintoProcess()
    let (directory, store, notes, sync) = try Self.indexedDevice("unique", url: kinto.url)
    defer {
      try? store.close()
      directory.remove()
    }
    try synchronously { try notes.save(Note(id: "mine", title: "local", count: 7)) }
    _ = try await sync.sync()
    let other = KintoHTTP(kinto.url)
    // Another client writes an object whose count this device's unique index already holds,
    // and one that breaks nothing, in the same page.
    try await other.put(Note(id: "theirs", title: "server", count: 7))
    try await other.put(Note(id: "fine", title: "server", count: 8))
    do {
      _ = try await sync.sync()
      XCTFail("a pull that breaks a unique index succeeded")
    } catch CollectionError.uniqueViolation(let collection, let index) {
      XCTAssertEqual(collection, "notes")
      XCTAssertEqual(index, "count")
    }
    XCTAssertNil(try synchronously { try notes.get(id: "theirs") })
    XCTAssertNil(try synchronously { try notes.get(id: "fine") }, "an object of the refused page was stored")
    try assertIndexesExact(notes, titles: ["local", "server"])
    // Once the conflict is gone on the server, the same sync goes through.
    try await other.put(Note(id: "theirs", title: "server", count: 9))
    let report = try await sync.sync()
    XCTAssertEqual(report.pulled, 2)
    XCTAssertEqual(try synchronously { try notes.get(id: "fine")?.count }, 8)
    try assertIndexesExact(notes, titles: ["local", "server"])
  }
}

/// Runs `body` as synchronous code: in an async test, a collection call picks its `async`
/// overload, which an assertion's autoclosure cannot await.
private func synchronously<R>(_ body: () throws -> R) rethrows -> R {
  try body()
}

import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// Two devices and a real Kinto: changes travel both ways, deletions too, and an unchanged
/// collection costs one request.
final class KintoSyncTests: XCTestCase {
  func testChangesAndDeletionsTravelBetweenDevices() async throws {
    let kinto = try KintoProcess()
    let phone = try Device("phone", url: kinto.url)
    let laptop = try Device("laptop", url: kinto.url)
    for index in 0..<20 { try phone.save(Note(id: "n\(index)", title: "note \(index)", count: index)) }
    let first = try await phone.sync.sync()
    XCTAssertEqual(first.pushed, 20)
    let pendingAfter = try await phone.pending()
    XCTAssertEqual(pendingAfter, 0)

    let pulled = try await laptop.sync.sync()
    XCTAssertEqual(pulled.pulled, 20)
    XCTAssertEqual(try laptop.all(), try phone.all())

    try laptop.save(Note(id: "n3", title: "edited on the laptop", count: 33))
    XCTAssertTrue(try laptop.delete("n4"))
    let pendingLaptop = try await laptop.pending()
    XCTAssertEqual(pendingLaptop, 2)
    let sent = try await laptop.sync.sync()
    XCTAssertEqual(sent.pushed, 2)

    let back = try await phone.sync.sync()
    XCTAssertFalse(back.fullResync)
    XCTAssertEqual(back.pulled, 1)
    XCTAssertEqual(back.deleted, 1)
    XCTAssertNil(try phone.get("n4"))
    XCTAssertEqual(try phone.get("n3")?.title, "edited on the laptop")
    XCTAssertEqual(try phone.all(), try laptop.all())
    let serverNotes = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(serverNotes, try phone.all())
  }

  func testNothingChangedCostsOneRequest() async throws {
    let kinto = try KintoProcess()
    let device = try Device("one", url: kinto.url)
    try device.save(Note(id: "a", title: "a", count: 1))
    try await device.sync.sync()
    try await device.sync.sync()  // pulls back its own push once
    let idle = try await device.sync.sync()
    XCTAssertEqual(idle.requests, 1)
    XCTAssertEqual(idle.pulled + idle.pushed + idle.deleted, 0)
  }

  func testIncrementalSyncMovesOnlyTheChanges() async throws {
    let kinto = try KintoProcess(batchLimit: 4)
    let device = try Device("inc", url: kinto.url)
    for index in 0..<60 { try device.save(Note(id: "n\(index)", title: "t", count: index)) }
    let initial = try await device.sync.sync()
    XCTAssertEqual(initial.pushed, 60)
    try await device.sync.sync()
    let other = KintoHTTP(kinto.url)
    for index in 0..<5 { try await other.put(Note(id: "n\(index)", title: "server", count: -index)) }
    for index in 5..<7 { try await other.delete("n\(index)") }
    for index in 10..<20 { try device.save(Note(id: "n\(index)", title: "local", count: index)) }
    let report = try await device.sync.sync()
    XCTAssertEqual(report.pulled, 5)
    XCTAssertEqual(report.deleted, 2)
    XCTAssertEqual(report.pushed, 10)
    // One listing page of 7 changes (page size 7, so 1 page and the empty check), the count,
    // the root's batch limit, ⌈10 / 4⌉ batches, and the listing of ids that passes over them.
    let pages = (7 + 6) / 7
    XCTAssertLessThanOrEqual(report.requests, 2 + pages + 1 + 3 + 1, "requests: \(report.requests)")
    let serverNotes = try await other.notes()
    XCTAssertEqual(serverNotes, try device.all())
  }

  func testAChangeThroughAPlainHandleInALaterProcessIsSent() async throws {
    let kinto = try KintoProcess()
    let device = try Device("later", url: kinto.url)
    try device.save(Note(id: "before", title: "made before sync existed", count: 0))
    try await device.sync.sync()
    try device.store.close()
    try Self.changeWithoutSync(at: device.directory.file("s.cask"), file: device.directory.file("in.json"))
    try device.reopen()
    let pendingLater = try await device.pending()
    XCTAssertEqual(pendingLater, 4)
    let report = try await device.sync.sync()
    XCTAssertEqual(report.pushed, 4)
    let serverNotes = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(Set(serverNotes.keys), ["plain", "batched", "imported"])
  }

  /// What a later process that never makes a CaskSync does: a plain handle, a batch, a
  /// streamed import from a file.
  private static func changeWithoutSync(at path: String, file: String) throws {
    let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
    let notes = store.collection(Note.self, named: "notes")
    try notes.save(Note(id: "plain", title: "plain", count: 1))
    try store.batch { batch in
      try batch.save(Note(id: "batched", title: "batched", count: 2), in: notes)
      try batch.delete(id: "before", from: notes)
    }
    try Data(#"[{"id": "imported", "title": "imported", "count": 3}]"#.utf8).write(to: URL(fileURLWithPath: file))
    try notes.importJSON(contentsOf: URL(fileURLWithPath: file))
    try store.close()
  }

  func testSyncsOwnWritesAreNotMarkedAgain() async throws {
    let kinto = try KintoProcess()
    let device = try Device("own", url: kinto.url)
    let other = try Device("first", url: kinto.url)
    _ = try await other.sync.sync()  // makes the bucket and collection
    try await KintoHTTP(kinto.url).put(Note(id: "s", title: "from the server", count: 1))
    try await KintoHTTP(kinto.url).put(Note(id: "s2", title: "from the server", count: 2))
    let report = try await device.sync.sync()
    XCTAssertEqual(report.pulled, 2)
    let pendingOwn = try await device.pending()
    XCTAssertEqual(pendingOwn, 0, "what a pull stored must not be sent back")
  }

  func testEventsTellTheSync() async throws {
    let kinto = try KintoProcess()
    let device = try Device("events", url: kinto.url)
    let events = device.sync.events
    for index in 0..<3 { try device.save(Note(id: "e\(index)", title: "e", count: index)) }
    try await device.sync.sync()
    var seen: [SyncEvent] = []
    for await event in events {
      seen.append(event)
      if case .finished = event { break }
    }
    XCTAssertEqual(seen.first, .started)
    XCTAssertTrue(seen.contains(.fullResync))
    XCTAssertTrue(seen.contains(.pushedBatch(changes: 3, total: 3)))
    XCTAssertEqual(seen.last, .finished(pulled: 0, deleted: 0, pushed: 3, conflicts: 0))
  }

  /// The sample of Docs/SYNC.md, section 15, with the test server's URL.
  func testTheGuideSample() async throws {
    let kinto = try KintoProcess()
    let directory = try TemporaryDirectory("guide")
    defer { directory.remove() }
    let store = try CaskStore(path: directory.file("app.cask"), password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    try await store.collection(Note.self).save(Note(id: "n1", title: "first", count: 1))
    let secret = "a password"
    let server = KintoServer(url: kinto.url, user: "ada", password: secret)
    let sync = try CaskSync(store.collection(Note.self), server: server, bucket: "ada", collection: "notes")
    let events = sync.events  // .started, .pulledPage, .pushedBatch, .retrying, .conflict, .finished, …
    let report = try await sync.sync(conflicts: .serverWins)  // or .clientWins, .manual (the default)
    print(report.pulled, report.deleted, report.pushed, report.conflicts.count)
    let waiting = try await sync.pendingCount
    XCTAssertEqual(report.pushed, 1)
    XCTAssertEqual(waiting, 0)
    var iterator = events.makeAsyncIterator()
    let first = await iterator.next()
    XCTAssertEqual(first, .started)
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// A sync to a server that dates records when their statement runs lists the records dated
/// within the settling margin once more after the margin has passed: the unchanged-collection
/// shortcut waits for it, records listed again are no-ops, and a local change is not taken for
/// a conflict with the server version it was made on.
final class KintoSettlingWindowTests: XCTestCase {
  /// A sync of `device`'s collection to a server with `margin` and dates not in commit order.
  private func sync(_ device: Device, margin: TimeInterval) throws -> CaskSync<Note> {
    var server = Device.server(device.serverURL, retry: device.retry, datesInCommitOrder: false)
    server.settlingMargin = margin
    return try CaskSync(
      device.notes, server: server, bucket: "tests", collection: "notes", endToEndPassphrase: nil,
      keyCost: testKeyCost)
  }

  func testAnUnchangedCollectionCostsOneRequestOnlyOnceTheMarginHasPassed() async throws {
    let kinto = try KintoProcess()
    let device = try Device("settling", url: kinto.url)
    let margin: TimeInterval = 5
    let sync = try sync(device, margin: margin)
    for index in 0..<3 { try device.save(Note(id: "s\(index)", title: "t", count: index)) }
    let pushed = try await sync.sync()
    XCTAssertEqual(pushed.pushed, 3)
    let back = try await sync.sync()
    XCTAssertEqual(back.pulled + back.deleted, 0, "its own push listed again is stored already")
    let within = try await sync.sync()
    XCTAssertEqual(within.requests, 2, "within the margin the HEAD is followed by a listing")
    XCTAssertEqual(within.pulled + within.deleted + within.pushed, 0)
    // The server's Date has whole seconds: a second more than the margin is sure to pass it.
    try await Task.sleep(for: .seconds(margin + 1.5))
    let settling = try await sync.sync()
    XCTAssertEqual(settling.requests, 2, "the listing that settles the window")
    let idle = try await sync.sync()
    XCTAssertEqual(idle.requests, 1, "settled: nothing changed costs one request")
    XCTAssertEqual(idle.pulled + idle.deleted + idle.pushed, 0)
  }

  func testARecordListedAgainIsNoConflictWithTheLocalChangeMadeOnIt() async throws {
    let kinto = try KintoProcess()
    let writer = try Device("window-writer", url: kinto.url)
    let reader = try Device("window-reader", url: kinto.url)
    let sync = try sync(reader, margin: 60)
    try writer.save(Note(id: "w", title: "from the writer", count: 1))
    try await writer.sync.sync()
    let first = try await sync.sync(conflicts: .manual)
    XCTAssertEqual(first.pulled, 1)
    try reader.save(Note(id: "w", title: "edited on the reader", count: 2))
    let report = try await sync.sync(conflicts: .manual)
    XCTAssertEqual(report.conflicts.count, 0, "the version listed again is the one the edit was made on")
    XCTAssertEqual(report.pulled, 0)
    XCTAssertEqual(report.pushed, 1)
    let held = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(held["w"]?.title, "edited on the reader")
  }

  func testTheSettledTimestampFollowsTheServersDateLessTheMargin() throws {
    let answer = { (date: String?) in
      HTTPResponse(status: 200, headers: date.map { ["Date": $0] } ?? [:], body: Data())
    }
    // 1,000,000,000 s after 1970 is Sun, 09 Sep 2001 01:46:40 GMT.
    let date = answer("Sun, 09 Sep 2001 01:46:40 GMT")
    XCTAssertEqual(SettlingWindow.serverTime(of: date), 1_000_000_000_000)
    let cursor: Int64 = 1_000_000_000_000
    XCTAssertEqual(SettlingWindow.settled(after: date, cursor: cursor, previous: 5, margin: 60_000), cursor - 60_000)
    XCTAssertEqual(
      SettlingWindow.settled(after: date, cursor: cursor - 90_000, previous: 5, margin: 60_000), cursor - 90_000,
      "never after the cursor")
    XCTAssertEqual(
      SettlingWindow.settled(after: date, cursor: cursor, previous: cursor - 1_000, margin: 60_000), cursor - 1_000,
      "never back before where it was")
    XCTAssertEqual(SettlingWindow.settled(after: date, cursor: cursor, previous: 5, margin: 0), cursor)
    let undated = answer(nil)
    XCTAssertEqual(SettlingWindow.settled(after: undated, cursor: cursor, previous: 5, margin: 60_000), 5)
    XCTAssertEqual(
      SettlingWindow.settled(after: undated, cursor: cursor, previous: nil, margin: 60_000), 0,
      "a full listing without the server's time settles nothing")
    XCTAssertNil(SettlingWindow.serverTime(of: answer("yesterday")))
  }

  func testAMarginThatIsNoNumberCountsAsTheLargest() {
    var server = KintoServer(url: URL(string: "http://127.0.0.1:1/v1")!, user: "u", password: "p")
    XCTAssertEqual(server.settlingMilliseconds, 60_000)
    server.settlingMargin = .nan
    XCTAssertEqual(server.settlingMilliseconds, 1_000_000_000_000)
    server.settlingMargin = -4
    XCTAssertEqual(server.settlingMilliseconds, 0)
    server.settlingMargin = 2
    server.datesInCommitOrder = true
    XCTAssertEqual(server.settlingMilliseconds, 0, "records dated in commit order need no margin")
  }
}

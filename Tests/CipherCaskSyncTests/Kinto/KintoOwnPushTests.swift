import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// After a push, the next sync does not download the records this device just sent — but
/// never passes over another client's change made between the pull and the push.
final class KintoOwnPushTests: XCTestCase {
  func testTheSyncAfterAPushCostsOneRequest() async throws {
    for passphrase in [nil, "shared words"] {
      let kinto = try KintoProcess()
      let device = try Device("own", url: kinto.url, passphrase: passphrase)
      for index in 0..<30 { try device.save(Note(id: "n\(index)", title: "t", count: index)) }
      let first = try await device.sync.sync()
      XCTAssertEqual(first.pushed, 30)
      let next = try await device.sync.sync()
      XCTAssertEqual(next.pulled, 0)
      XCTAssertEqual(next.requests, 1, "a sync after the device's own push listed records again")

      // Changes and deletions pushed later are passed over the same way.
      for index in 0..<5 { try device.save(Note(id: "n\(index)", title: "changed", count: index)) }
      XCTAssertTrue(try device.delete("n29"))
      let pushed = try await device.sync.sync()
      XCTAssertEqual(pushed.pushed, 6)
      let idle = try await device.sync.sync()
      XCTAssertEqual(idle.pulled + idle.deleted, 0)
      XCTAssertLessThanOrEqual(idle.requests, 2, "requests: \(idle.requests)")
      // What the server holds: readable in plain mode; end to end, another device's pull.
      if passphrase == nil {
        let serverNotes = try await KintoHTTP(kinto.url).notes()
        XCTAssertEqual(serverNotes, try device.all())
      } else {
        let reader = try Device("reader", url: kinto.url, passphrase: passphrase)
        try await reader.sync.sync()
        XCTAssertEqual(try reader.all(), try device.all())
      }
    }
  }

  /// Pushes this device's marked changes without pulling first, then runs the step that may
  /// pass the cursor over them: another client's change made before the push lies between
  /// the cursor and the push's newest timestamp.
  private func pushThenPass(_ device: Device) async throws -> (before: Int64?, after: Int64?) {
    var report = SyncReport<Note>()
    let newest = try await device.sync.push(.serverWins, report: &report)
    var state = try await device.sync.prepare()
    let before = state.cursor
    try await device.sync.passOwnPushes(through: try XCTUnwrap(newest), state: &state)
    return (before, try await device.sync.prepare().cursor)
  }

  func testAnotherClientsChangeBeforeThePushIsStillPulled() async throws {
    let kinto = try KintoProcess()
    let device = try Device("between", url: kinto.url)
    for index in 0..<10 { try device.save(Note(id: "n\(index)", title: "t", count: index)) }
    try await device.sync.sync()
    let other = KintoHTTP(kinto.url)
    try await other.put(Note(id: "foreign", title: "from elsewhere", count: 99))
    try device.save(Note(id: "n1", title: "local", count: 1))
    let cursors = try await pushThenPass(device)
    XCTAssertEqual(cursors.after, cursors.before, "the cursor passed over another client's record")
    let report = try await device.sync.sync()
    XCTAssertEqual(report.pulled, 1)
    XCTAssertEqual(try device.get("foreign")?.count, 99)
    let serverNotes = try await other.notes()
    XCTAssertEqual(serverNotes, try device.all())
  }

  func testAnotherClientsDeletionBeforeThePushIsStillApplied() async throws {
    let kinto = try KintoProcess()
    let device = try Device("deleted-between", url: kinto.url)
    for index in 0..<10 { try device.save(Note(id: "n\(index)", title: "t", count: index)) }
    try await device.sync.sync()
    try await device.sync.sync()
    let other = KintoHTTP(kinto.url)
    let deleted = try await other.delete("n4")
    XCTAssertEqual(deleted, 200)
    try device.save(Note(id: "n1", title: "local", count: 1))
    let cursors = try await pushThenPass(device)
    XCTAssertEqual(cursors.after, cursors.before, "the cursor passed over another client's deletion")
    let report = try await device.sync.sync()
    XCTAssertEqual(report.deleted, 1)
    XCTAssertNil(try device.get("n4"))
    let serverNotes = try await other.notes()
    XCTAssertEqual(serverNotes, try device.all())
  }

  func testWithNothingElseBetweenTheCursorPassesThePush() async throws {
    let kinto = try KintoProcess()
    let device = try Device("alone", url: kinto.url)
    for index in 0..<10 { try device.save(Note(id: "n\(index)", title: "t", count: index)) }
    try await device.sync.sync()
    try device.save(Note(id: "n1", title: "local", count: 1))
    let cursors = try await pushThenPass(device)
    XCTAssertNotNil(cursors.before)
    XCTAssertGreaterThan(try XCTUnwrap(cursors.after), try XCTUnwrap(cursors.before))
  }
}

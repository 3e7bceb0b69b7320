import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// An object changed on two devices between syncs: each policy keeps the right version, and
/// `.manual` keeps both until the app decides.
final class KintoConflictTests: XCTestCase {
  /// Two devices that both hold `c` as first synced, then each change it offline; the first
  /// device's change is on the server.
  private func conflicted(_ kinto: KintoProcess) async throws -> (Device, Device) {
    let first = try Device("first", url: kinto.url)
    let second = try Device("second", url: kinto.url)
    try first.save(Note(id: "c", title: "original", count: 0))
    try await first.sync.sync()
    try await second.sync.sync()
    try first.save(Note(id: "c", title: "first's", count: 1))
    try await first.sync.sync()
    try second.save(Note(id: "c", title: "second's", count: 2))
    return (first, second)
  }

  func testServerWinsReplacesTheLocalChange() async throws {
    let kinto = try KintoProcess()
    let (_, second) = try await conflicted(kinto)
    let report = try await second.sync.sync(conflicts: .serverWins)
    XCTAssertEqual(report.conflicts.count, 1)
    XCTAssertEqual(report.conflicts.first?.local?.title, "second's")
    XCTAssertEqual(report.conflicts.first?.server?.title, "first's")
    XCTAssertEqual(try second.get("c")?.title, "first's")
    let pending = try await second.pending()
    XCTAssertEqual(pending, 0)
  }

  func testClientWinsSendsTheLocalChangeOverTheServers() async throws {
    let kinto = try KintoProcess()
    let (first, second) = try await conflicted(kinto)
    let report = try await second.sync.sync(conflicts: .clientWins)
    XCTAssertEqual(report.conflicts.count, 1)
    XCTAssertEqual(report.pushed, 1)
    try await first.sync.sync()
    XCTAssertEqual(try first.get("c")?.title, "second's")
    let server = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(server["c"]?.title, "second's")
  }

  func testManualKeepsBothUntilTheAppDecides() async throws {
    let kinto = try KintoProcess()
    let (first, second) = try await conflicted(kinto)
    try second.save(Note(id: "other", title: "unrelated", count: 9))
    let report = try await second.sync.sync()
    XCTAssertEqual(report.conflicts.map(\.id), ["c"])
    XCTAssertEqual(report.pushed, 1, "the unrelated change goes; the conflicted one waits")
    XCTAssertEqual(try second.get("c")?.title, "second's")
    let kept = try await second.sync.conflicts()
    XCTAssertEqual(kept.first?.server?.title, "first's")
    XCTAssertEqual(kept.first?.local?.title, "second's")
    let pending = try await second.pending()
    XCTAssertEqual(pending, 1)
    let again = try await second.sync.sync()
    XCTAssertEqual(again.pushed, 0, "a kept conflict is not sent")
    var server = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(server["c"]?.title, "first's")

    let resolved = try await second.sync.resolve("c", with: .use(Note(id: "c", title: "merged", count: 3)))
    XCTAssertTrue(resolved)
    let sent = try await second.sync.sync()
    XCTAssertEqual(sent.pushed, 1)
    server = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(server["c"]?.title, "merged")
    try await first.sync.sync()
    XCTAssertEqual(try first.get("c")?.title, "merged")
  }

  func testAServerDeletionOfALocallyChangedObjectIsAConflict() async throws {
    let kinto = try KintoProcess()
    let device = try Device("dev", url: kinto.url)
    try device.save(Note(id: "gone", title: "v1", count: 1))
    try await device.sync.sync()
    try await KintoHTTP(kinto.url).delete("gone")
    try device.save(Note(id: "gone", title: "v2", count: 2))
    let kept = try await device.sync.sync()
    XCTAssertEqual(kept.conflicts.count, 1)
    XCTAssertNil(kept.conflicts.first?.server)
    XCTAssertEqual(try device.get("gone")?.title, "v2", ".manual keeps the local version")

    let settled = try await device.sync.sync(conflicts: .serverWins)
    XCTAssertEqual(settled.deleted, 1)
    XCTAssertNil(try device.get("gone"))
    let pending = try await device.pending()
    XCTAssertEqual(pending, 0)
  }
}

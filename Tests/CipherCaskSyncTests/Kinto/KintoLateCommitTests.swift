import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// Kinto on PostgreSQL dates a record when its statement runs, not when its transaction
/// commits: a transaction still open while a device lists the collection can commit afterwards
/// a record dated before the newest one that listing returned. These tests hold such a
/// transaction open in PostgreSQL itself (the same `UPDATE` Kinto's storage makes, dated by
/// its `bump_timestamp` trigger), let a device list past it, commit it, and check that the
/// device still gets the change.
final class KintoLateCommitTests: XCTestCase {
  /// The late change arrives with the next listing, which another change makes necessary.
  func testAChangeCommittedAfterAListingThatPassedItsDateIsPulled() async throws {
    let world = try await LateCommitWorld()
    try await world.commitLateAfterTheReaderListedPastIt()
    try world.writer.save(Note(id: "k0", title: "newer change", count: 3))
    try await world.writer.sync.sync(conflicts: .serverWins)
    let report = try await world.reader.sync.sync(conflicts: .serverWins)
    XCTAssertEqual(try world.reader.get("k1")?.title, "late commit")
    XCTAssertEqual(try world.reader.get("k0")?.title, "newer change")
    XCTAssertEqual(report.pulled, 2, "records listed again that were already stored are not counted")
    try await world.checkConverged()
  }

  /// Nothing else changed after the late commit: the collection's timestamp and record count
  /// are the ones the reader knows, and yet the late change must arrive.
  func testAChangeCommittedAfterAListingArrivesWhenTheCollectionLooksUnchanged() async throws {
    let world = try await LateCommitWorld()
    try await world.commitLateAfterTheReaderListedPastIt()
    let report = try await world.reader.sync.sync(conflicts: .serverWins)
    XCTAssertEqual(try world.reader.get("k1")?.title, "late commit")
    XCTAssertEqual(report.pulled, 1, "records listed again that were already stored are not counted")
    XCTAssertEqual(report.conflicts.count, 0)
    try await world.checkConverged()
  }
}

/// A Kinto on PostgreSQL with a writer and a reader device that share three notes.
private struct LateCommitWorld {
  let database: String
  let kinto: KintoProcess
  let writer: Device
  let reader: Device

  init() async throws {
    database = try PostgresCluster.shared().makeDatabase()
    kinto = try KintoProcess(database: database)
    writer = try Device("late-writer", url: kinto.url, datesInCommitOrder: false)
    reader = try Device("late-reader", url: kinto.url, datesInCommitOrder: false)
    for index in 0..<3 { try writer.save(Note(id: "k\(index)", title: "first", count: index)) }
    try await writer.sync.sync()
    try await reader.sync.sync()
    XCTAssertEqual(try reader.all().count, 3)
  }

  /// Opens a transaction that rewrites k1 (dated now by Kinto's trigger), lets the writer push
  /// a later-dated change of k2 and the reader list it, then commits the transaction.
  func commitLateAfterTheReaderListedPastIt() async throws {
    let object = #"{"localID": "k1", "object": {"id": "k1", "title": "late commit", "count": 9}}"#
    let late = try OpenTransaction(
      database,
      """
      UPDATE objects SET data = '\(object)'::jsonb, last_modified = NULL
        WHERE id = 'k1' AND parent_id = '/buckets/tests/collections/notes' AND resource_name = 'record';
      """)
    try await Task.sleep(for: .milliseconds(50))
    try writer.save(Note(id: "k2", title: "pushed while k1 was open", count: 2))
    try await writer.sync.sync()
    try await reader.sync.sync()
    XCTAssertEqual(try reader.get("k2")?.title, "pushed while k1 was open")
    XCTAssertEqual(try reader.get("k1")?.title, "first", "the open transaction is not visible yet")
    try late.commit()
    let held = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(held["k1"]?.title, "late commit")
  }

  func checkConverged() async throws {
    let held = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(try reader.all(), held)
    let pending = try await reader.pending()
    XCTAssertEqual(pending, 0)
  }
}

/// A transaction held open in PostgreSQL by `psql` until `commit()`.
private final class OpenTransaction {
  private let psql = Process()
  private let input = Pipe()
  private let database: String

  /// Starts `psql`, begins a transaction, runs `statement` in it, and returns once PostgreSQL
  /// shows the session idle inside that transaction (the statement has run).
  init(_ database: String, _ statement: String) throws {
    self.database = database
    psql.executableURL = URL(fileURLWithPath: try PostgresCluster.binaries() + "/psql")
    psql.arguments = [database, "-q", "-v", "ON_ERROR_STOP=1"]
    psql.standardInput = input
    psql.standardOutput = FileHandle.nullDevice
    psql.standardError = FileHandle.nullDevice
    try psql.run()
    input.fileHandleForWriting.write(Data("BEGIN;\n\(statement)\n".utf8))
    let deadline = Date().addingTimeInterval(30)
    let waiting =
      "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle in transaction'"
    while try PostgresCluster.sql(database, waiting).trimmingCharacters(in: .whitespacesAndNewlines) != "1" {
      guard Date() < deadline, psql.isRunning else {
        throw KintoProcessError(description: "psql's statement did not run")
      }
      usleep(20_000)
    }
  }

  /// Commits and waits for `psql` to end.
  func commit() throws {
    input.fileHandleForWriting.write(Data("COMMIT;\n".utf8))
    try input.fileHandleForWriting.close()
    psql.waitUntilExit()
    guard psql.terminationStatus == 0 else { throw KintoProcessError(description: "psql's commit failed") }
  }

  deinit {
    if psql.isRunning { psql.terminate() }
  }
}

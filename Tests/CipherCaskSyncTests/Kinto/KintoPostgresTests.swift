import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// Kinto on PostgreSQL (the server `CASK_SYNC_POSTGRES` names, or a cluster these tests start):
/// two Kinto processes on one database, a batch that a 409 rolls back, a real
/// `kinto purge-deleted`, and no plaintext in the database in end-to-end mode.
final class KintoPostgresTests: XCTestCase {
  func testDevicesSyncingThroughTwoKintoProcessesOnOneDatabaseConverge() async throws {
    let database = try PostgresCluster.shared().makeDatabase()
    let north = try KintoProcess(batchLimit: 3, database: database)
    let south = try KintoProcess(batchLimit: 3, database: database)
    // Every record written waits up to 50 ms between its date and its transaction's commit, so
    // that batches of one device often commit after another device's listing has passed their
    // dates: the devices converge only if their listings reach back over such late commits.
    try PostgresCluster.sql(
      database,
      """
      CREATE FUNCTION cask_test_stall() RETURNS trigger AS $$
        BEGIN PERFORM pg_sleep(random() * 0.05); RETURN NEW; END; $$ LANGUAGE plpgsql;
      CREATE TRIGGER cask_test_stall AFTER INSERT OR UPDATE ON objects
        FOR EACH ROW EXECUTE PROCEDURE cask_test_stall();
      """)
    let devices = [
      // Devices write at the same time: Kinto on PostgreSQL may commit an older-dated batch
      // after a newer one, so every device lists from its settled timestamp (the default
      // settling margin) and none passes over its own pushes in one listing.
      try Device("north-1", url: north.url, datesInCommitOrder: false),
      try Device("south-1", url: south.url, datesInCommitOrder: false),
      try Device("south-2", url: south.url, datesInCommitOrder: false),
    ]
    var random = SeededRandom.make(test: "KintoPostgresTests")
    try await devices[0].sync.sync()
    for round in 0..<4 {
      for device in devices {
        for _ in 0..<3 {
          let id = "k\(Int.random(in: 0..<12, using: &random))"
          if Int.random(in: 0..<4, using: &random) == 0 {
            try device.delete(id)
          } else {
            try device.save(Note(id: id, title: "\(device.name) round \(round)", count: round))
          }
        }
      }
      // At the same time: the two processes serve concurrent batches on one database.
      try await withThrowingTaskGroup(of: Void.self) { group in
        for device in devices.shuffled(using: &random) {
          let sync = device.sync
          group.addTask { _ = try await sync.sync(conflicts: .serverWins) }
        }
        try await group.waitForAll()
      }
    }
    for _ in 0..<2 { for device in devices { try await device.sync.sync(conflicts: .serverWins) } }
    let held = try await KintoHTTP(north.url).notes()
    let southHeld = try await KintoHTTP(south.url).notes()
    XCTAssertEqual(southHeld, held)
    for device in devices {
      XCTAssertEqual(try device.all(), held, "\(device.name)")
      let pending = try await device.pending()
      XCTAssertEqual(pending, 0)
    }
  }

  func testAConflictThatRollsBackABatchLosesNothing() async throws {
    let database = try PostgresCluster.shared().makeDatabase()
    let kinto = try KintoProcess(database: database)
    let device = try Device("rolled-back", url: kinto.url, retry: RetryPolicy(attempts: 1))
    try await device.sync.sync()
    for id in ["a", "b", "x"] { try device.save(Note(id: id, title: id, count: 1)) }
    // Another writer holds an uncommitted insert of "x": the batch's insert of "x" waits on
    // it, then fails on the unique key once it commits (409), and the batch's transaction
    // (with "a" and "b", already answered 201) is rolled back.
    let psql = Process()
    psql.executableURL = URL(fileURLWithPath: try PostgresCluster.binaries() + "/psql")
    psql.arguments = [database, "-q"]
    let input = Pipe()
    psql.standardInput = input
    psql.standardOutput = FileHandle.nullDevice
    psql.standardError = FileHandle.nullDevice
    try psql.run()
    let object = #"{"localID": "x", "object": {"id": "x", "title": "other writer", "count": 2}}"#
    input.fileHandleForWriting.write(
      Data(
        """
        BEGIN;
        INSERT INTO objects (id, parent_id, resource_name, last_modified, data, deleted)
          VALUES ('x', '/buckets/tests/collections/notes', 'record', now(), '\(object)', false);

        """.utf8))
    try await Task.sleep(for: .milliseconds(500))
    let events = device.sync.events
    let sync = device.sync
    let running = Task { try await sync.sync(conflicts: .serverWins) }
    try await Task.sleep(for: .seconds(2))
    input.fileHandleForWriting.write(Data("COMMIT;\n".utf8))
    try input.fileHandleForWriting.close()
    let report = try await running.value
    psql.waitUntilExit()
    var unconfirmed = 0
    for await event in events {
      if case .unconfirmed(let changes) = event { unconfirmed += changes }
      if case .finished = event { break }
    }
    XCTAssertEqual(unconfirmed, 2, "a and b were reported created, then rolled back")
    XCTAssertEqual(report.conflicts.map(\.id), ["x"])
    let held = try await KintoHTTP(kinto.url).notes()
    XCTAssertEqual(held["a"]?.title, "a")
    XCTAssertEqual(held["b"]?.title, "b")
    XCTAssertEqual(held["x"]?.title, "other writer")
    XCTAssertEqual(try device.all(), held)
  }

  func testPurgeDeletedTriggersAFullResync() async throws {
    let kinto = try KintoProcess(database: PostgresCluster.shared().makeDatabase())
    let device = try Device("purge", url: kinto.url)
    for index in 0..<4 { try device.save(Note(id: "z\(index)", title: "t", count: index)) }
    try await device.sync.sync()
    try await device.sync.sync()
    try await KintoHTTP(kinto.url).delete("z1")
    try kinto.purgeDeleted()
    let report = try await device.sync.sync()
    XCTAssertTrue(report.fullResync)
    XCTAssertEqual(report.deleted, 1)
    XCTAssertEqual(Set(try device.all().keys), ["z0", "z2", "z3"])
  }

  func testTheDatabaseHoldsNoPlaintextInEndToEndMode() async throws {
    let database = try PostgresCluster.shared().makeDatabase()
    let kinto = try KintoProcess(database: database)
    let device = try Device("dump", url: kinto.url, passphrase: "a passphrase for the dump")
    let notes = (0..<5).map { Note(id: "private-id-\($0)", title: "private-title-\($0)", count: 7_301_928_465 + $0) }
    for note in notes { try device.save(note) }
    try await device.sync.sync()
    let dump = try PostgresCluster.dump(database)
    XCTAssertTrue(dump.contains("ciphertext"), "the dump holds the records")
    for note in notes {
      XCTAssertFalse(dump.contains(note.id))
      XCTAssertFalse(dump.contains(note.title))
      XCTAssertFalse(dump.contains(String(note.count)))
    }
    XCTAssertFalse(dump.contains("a passphrase for the dump"))
  }
}

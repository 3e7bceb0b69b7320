import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// The push's batch as a real Kinto takes it: updates answered without the record echoed,
/// their timestamps still confirmed, and an update of a record the server deleted still met
/// as a conflict.
final class KintoBatchTests: XCTestCase {
  /// The batch `CaskSync` sends, posted as it is: Kinto merges the defaults into every item,
  /// saves the update, the create and the deletion, and answers the update with no fields.
  func testAnUpdateIsSavedAndAnsweredWithoutItsRecord() async throws {
    for passphrase in [nil, "shared words"] {
      let kinto = try KintoProcess()
      let device = try Device("shape", url: kinto.url, passphrase: passphrase)
      for index in 0..<3 { try device.save(Note(id: "n\(index)", title: "t", count: index)) }
      try await device.sync.sync()
      let codec = device.sync.codec
      let ledger = SyncLedger(collection: "notes")
      func item(_ id: String, _ note: Note?) throws -> CaskSync<Note>.PushItem {
        let recordID = try codec.recordID(for: id)
        let base = try ledger.meta(recordID, in: device.store)?.modified
        return .init(id: id, token: Data(), recordID: recordID, object: note, base: base)
      }
      let changed = Note(id: "n0", title: "changed", count: 100)
      let created = Note(id: "n9", title: "new", count: 9)
      let items = [try item("n0", changed), try item("n9", created), try item("n1", nil)]
      let body = try device.sync.batchBody(items)

      let requests = try XCTUnwrap(body["requests"] as? [[String: Any]])
      XCTAssertEqual((body["defaults"] as? [String: Any])?["method"] as? String, "PATCH")
      XCTAssertNil(requests[0]["method"], "the update repeats the default method")
      XCTAssertNil(((requests[0]["body"] as? [String: Any])?["data"] as? [String: Any])?["id"])
      XCTAssertEqual(requests[1]["method"] as? String, "PUT")
      XCTAssertEqual(requests[2]["method"] as? String, "DELETE")

      let (status, data, _) = try await KintoHTTP(kinto.url).request("POST", "/batch", json: body)
      XCTAssertEqual(status, 200)
      let answer = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
      let responses = try XCTUnwrap(answer["responses"] as? [[String: Any]])
      XCTAssertEqual(responses.map { ($0["status"] as? NSNumber)?.intValue }, [200, 201, 200])
      let updated = try XCTUnwrap(responses[0]["body"] as? [String: Any])
      XCTAssertEqual((updated["data"] as? [String: Any])?.count, 0, "the update's answer echoes the record")
      XCTAssertNil(updated["permissions"])
      let etag = (responses[0]["headers"] as? [String: Any])?["ETag"] as? String
      let records = try await KintoHTTP(kinto.url).records()
      let stored = try XCTUnwrap(records[items[0].recordID])
      XCTAssertEqual(CaskSync<Note>.timestamp(fromETag: etag), (stored["last_modified"] as? NSNumber)?.int64Value)
      XCTAssertNil(records[items[2].recordID], "the deletion did not happen")
      XCTAssertEqual(try codec.decode(stored).object, changed)
      XCTAssertEqual(try codec.decode(try XCTUnwrap(records[items[1].recordID])).object, created)
    }
  }

  /// Through `sync`: each updated object's server timestamp, taken from the item's ETag, is the
  /// one recorded locally, so the sync after it passes over the device's own push.
  func testAnUpdatesTimestampComesFromItsETag() async throws {
    for passphrase in [nil, "shared words"] {
      let kinto = try KintoProcess()
      let device = try Device("etag", url: kinto.url, passphrase: passphrase)
      for index in 0..<12 { try device.save(Note(id: "n\(index)", title: "t", count: index)) }
      try await device.sync.sync()
      for index in 0..<8 { try device.save(Note(id: "n\(index)", title: "changed", count: -index)) }
      let pushed = try await device.sync.sync()
      XCTAssertEqual(pushed.pushed, 8)
      let records = try await KintoHTTP(kinto.url).records()
      let ledger = SyncLedger(collection: "notes")
      for index in 0..<12 {
        let recordID = try device.sync.codec.recordID(for: "n\(index)")
        let server = (records[recordID]?["last_modified"] as? NSNumber)?.int64Value
        XCTAssertNotNil(server)
        XCTAssertEqual(try ledger.meta(recordID, in: device.store)?.modified, server, "n\(index)")
      }
      let idle = try await device.sync.sync()
      XCTAssertEqual(idle.requests, 1)
      XCTAssertEqual(idle.pulled + idle.deleted, 0)
    }
  }

  /// An update goes as a `PATCH`, which Kinto answers 404 when the record is gone: that is the
  /// server's deletion meeting a local change, a conflict settled by the policy as any other.
  func testAnUpdateOfARecordDeletedOnTheServerIsAConflict() async throws {
    for policy in [SyncConflictPolicy.manual, .serverWins, .clientWins] {
      let kinto = try KintoProcess()
      let device = try Device("gone-\(policy)", url: kinto.url)
      for index in 0..<4 { try device.save(Note(id: "n\(index)", title: "t", count: index)) }
      try await device.sync.sync()
      let other = KintoHTTP(kinto.url)
      let deleted = try await other.delete("n2")
      XCTAssertEqual(deleted, 200)
      let mine = Note(id: "n2", title: "mine", count: 22)
      try device.save(mine)
      // Pushed without the pull before it, which would have met the tombstone first.
      var report = SyncReport<Note>()
      try await device.sync.push(policy, report: &report)
      XCTAssertEqual(report.conflicts.map(\.id), ["n2"], "\(policy)")
      XCTAssertEqual(report.conflicts.first?.local, mine)
      XCTAssertNil(report.conflicts.first?.server)
      let server = try await other.notes()
      let pending = try await device.pending()
      switch policy {
      case .manual:
        XCTAssertEqual(try device.get("n2"), mine)
        XCTAssertNil(server["n2"])
        XCTAssertEqual(pending, 1)
      case .serverWins:
        XCTAssertNil(try device.get("n2"))
        XCTAssertNil(server["n2"])
        XCTAssertEqual(pending, 0)
      case .clientWins:
        XCTAssertEqual(server["n2"], mine, "the local change was not sent again as a new record")
        XCTAssertEqual(pending, 0)
      }
    }
  }
}

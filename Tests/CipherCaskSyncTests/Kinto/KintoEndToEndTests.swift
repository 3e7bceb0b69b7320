import CaskTestSupport
import CipherCask
import Foundation
import XCTest

@testable import CipherCaskSync

/// End-to-end mode: the server holds keyed hashes of the ids and sealed objects only; a second
/// device with the passphrase syncs, one with another passphrase is refused.
final class KintoEndToEndTests: XCTestCase {
  func testTheServerHoldsNoIdOrFieldAndASecondDeviceSyncs() async throws {
    let kinto = try KintoProcess()
    let phone = try Device("e2e-phone", url: kinto.url, passphrase: "correct horse battery staple")
    let notes = (0..<12).map { Note(id: "secret-id-\($0)", title: "plaintext-title-\($0)", count: 7_301_928_465 + $0) }
    for note in notes { try phone.save(note) }
    try phone.delete("secret-id-11")
    let report = try await phone.sync.sync()
    XCTAssertEqual(report.pushed, 11)

    let records = try await KintoHTTP(kinto.url).records()
    XCTAssertEqual(records.count, 11)
    let dump = String(decoding: try JSONSerialization.data(withJSONObject: Array(records.values)), as: UTF8.self)
    for note in notes {
      XCTAssertFalse(dump.contains(note.id), "a local id reached the server")
      XCTAssertFalse(dump.contains(note.title), "a field value reached the server")
      XCTAssertFalse(dump.contains(String(note.count)), "a number reached the server")
    }
    for (id, record) in records {
      XCTAssertEqual(id.count, 64)
      XCTAssertEqual(Set(record.keys), ["id", "ciphertext", "last_modified"])
    }

    let laptop = try Device("e2e-laptop", url: kinto.url, passphrase: "correct horse battery staple")
    let pulled = try await laptop.sync.sync()
    XCTAssertEqual(pulled.pulled, 11)
    XCTAssertEqual(try laptop.all(), try phone.all())

    try laptop.delete("secret-id-3")
    try laptop.save(Note(id: "secret-id-4", title: "edited", count: 1))
    try await laptop.sync.sync()
    let back = try await phone.sync.sync()
    XCTAssertEqual(back.deleted, 1, "a deletion travels as a tombstone of the hashed id")
    XCTAssertEqual(try phone.get("secret-id-4")?.title, "edited")
    XCTAssertEqual(try phone.all(), try laptop.all())
  }

  func testAnotherPassphraseIsRefused() async throws {
    let kinto = try KintoProcess()
    let phone = try Device("e2e-a", url: kinto.url, passphrase: "one passphrase")
    try phone.save(Note(id: "a", title: "a", count: 1))
    try await phone.sync.sync()
    let intruder = try Device("e2e-b", url: kinto.url, passphrase: "another passphrase")
    do {
      try await intruder.sync.sync()
      XCTFail("another passphrase must be refused")
    } catch SyncError.wrongPassphrase {}
    XCTAssertEqual(try intruder.all(), [:])
    XCTAssertFalse(String(describing: SyncError.wrongPassphrase).contains("one passphrase"))
  }
}

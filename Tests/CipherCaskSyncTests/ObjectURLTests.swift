import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

/// `objectURL`'s refusal of '', '.' and '..': a remote id with a '/' has dot
/// segments too, and resolves to another resource.
@Suite("Remote ids with dot segments after a slash are refused")
struct ObjectURLTests {
  @Test("a queued delete of the id 'v/../victim' deletes that object, not the object 'victim'")
  func slashDotDotIdDeletesAnotherObject() async throws {
    let fixture = try SyncFixture("slash-dotdot")
    defer { fixture.close() }
    let sync = fixture.remote()
    let victim = User(id: "victim", email: "v@example.com", first: "V", last: "V", address: nil)
    let odd = User(id: "v/../victim", email: "o@example.com", first: "O", last: "O", address: nil)
    try await sync.saveAndQueue(victim)
    try await sync.saveAndQueue(odd)
    #expect(try await sync.pushPending() == 2)
    #expect(try await fixture.server.log() == ["POST victim", "POST v/../victim"])

    try await sync.deleteAndQueue(id: "v/../victim")
    _ = try? await sync.pushPending()
    let log = try await fixture.server.log()
    #expect(!log.contains("DELETE victim"), "deleting 'v/../victim' deleted 'victim': \(log)")
  }

  @Test("a queued delete of the id '..' is not dropped as done while the server keeps the object")
  func dotDotIdDeleteIsNotLost() async throws {
    let fixture = try SyncFixture("dotdot")
    defer { fixture.close() }
    let sync = fixture.remote()
    let odd = User(id: "..", email: "dots@example.com", first: "Dot", last: "Dot", address: nil)
    try await sync.saveAndQueue(odd)
    #expect(try await sync.pushPending() == 1)  // POST /users, body id ".."
    #expect(try await fixture.server.log() == ["POST .."])

    try await sync.deleteAndQueue(id: "..")
    // `baseURL/..` is the parent of the resource once the dot segment is resolved: the
    // server answers 404, which the outbox takes for "already deleted".
    _ = try? await sync.pushPending()
    let deletedRemotely = try await fixture.server.log().contains("DELETE ..")
    #expect(deletedRemotely || sync.pendingCount == 1, "the delete left the queue but never reached the object")
  }
}

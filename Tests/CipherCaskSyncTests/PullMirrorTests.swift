import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

@Suite("pullAll deleting what the server no longer lists")
struct PullMirrorTests {
  @Test("a server-side delete removes the local object; one with a queued change stays")
  func deletingMissing() async throws {
    let fixture = try SyncFixture()
    defer { fixture.close() }
    let remote = fixture.remote()
    _ = try await remote.pullAll()
    #expect(fixture.users.count == 5)
    let (status, _) = try await fixture.server.request("DELETE", "/users/u2")
    #expect(status == 204 || status == 200)
    _ = try await fixture.server.request("DELETE", "/users/u4")
    // u4 changed locally and queued: its change has yet to reach the server.
    var changed = try #require(try await fixture.users.get(id: "u4"))
    changed.email = "kept@example.com"
    try await remote.saveAndQueue(changed)

    let plain = try await remote.pullAll()
    #expect(plain == .init(inserted: 0, replaced: 3))
    #expect(fixture.users.count == 5, "without the option nothing is deleted")

    let mirrored = try await remote.pullAll(deletingMissing: true)
    #expect(mirrored == .init(inserted: 0, replaced: 3, deleted: 1))
    #expect(try await fixture.users.get(id: "u2") == nil)
    #expect(try await fixture.users.get(id: "u4")?.email == "kept@example.com")
  }
}

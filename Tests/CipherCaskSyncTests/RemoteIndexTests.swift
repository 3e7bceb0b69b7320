import CaskTestSupport
import CipherCask
import Foundation
import Testing

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite("Remote collections keep the secondary indexes")
struct RemoteIndexTests {
  @Test("pullAll, push and a remote delete keep the entries of the collection's indexes")
  func pullsAndPushesKeepIndexes() async throws {
    let fixture = try SyncFixture("sync-indexes")
    defer { fixture.close() }
    let users = fixture.store.collection(
      User.self, indexes: [.index("first", \.first), .unique("email", \.email)])
    let remote = SyncFixture.remote(users, fixture.server, pagination: .nextURL(key: "next"))
    _ = try await remote.pullAll()
    #expect(try await users.query().where(\.first, equals: "First2").ids() == ["u2"])
    let newcomer = User(id: "n1", email: "n1@example.com", first: "New", last: "One", address: nil)
    try await remote.push(newcomer)
    #expect(try await users.query().where(\.email, equals: "n1@example.com").ids() == ["n1"])
    #expect(try await remote.delete(id: "u2"))
    #expect(try await users.query().where(\.first, equals: "First2").count() == 0)
    let report = try await users.verifyIndexes()
    #expect(report.isConsistent)
    #expect(report.indexes.count == 2)
  }
}

import CaskTestSupport
import CipherCask
import Foundation

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A test's own REST server, store directory, store and `User` collection.
struct SyncFixture {
  let server: RESTServer
  let directory: TemporaryDirectory
  let store: CaskStore
  let users: CaskCollection<User>

  init(_ name: String = "sync") throws {
    server = try RESTServer()
    directory = try TemporaryDirectory(name)
    store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    users = store.collection(User.self)
  }

  /// `users` synced with the server's `/users` (`result` envelope, next links, a 10 s timeout).
  func remote(
    token: String = RESTServer.token, pagination: RemoteConfiguration.Pagination = .nextURL(key: "next"),
    timeout: TimeInterval = 10
  ) -> RemoteCollection<User> {
    Self.remote(users, server, token: token, pagination: pagination, timeout: timeout)
  }

  /// `users` synced with `server`'s `/users` in a `result` envelope, with the bearer token;
  /// the configuration's defaults otherwise.
  static func remote(
    _ users: CaskCollection<User>, _ server: RESTServer, token: String = RESTServer.token,
    pagination: RemoteConfiguration.Pagination = .none, timeout: TimeInterval = 30
  ) -> RemoteCollection<User> {
    RemoteCollection(
      users, baseURL: server.url("/users"),
      configuration: RemoteConfiguration(
        envelope: .key("result"), pagination: pagination, timeout: timeout,
        prepareRequest: { $0.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }))
  }

  func close() {
    try? store.close()
    server.stop()
    directory.remove()
  }
}

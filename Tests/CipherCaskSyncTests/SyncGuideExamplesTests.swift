import CaskTestSupport
import CipherCask
import CipherCaskSync
import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// The code samples of Docs/SYNC.md, compiled here and run against the test server
// (Server/rest_server.py). Each sample is copied into the guide as it stands between its
// "SYNC.md" markers; change both together. The samples live inside `SyncGuide` only so that
// their `User` does not clash with the `User` of the other tests in this target.

struct SyncGuide {
  // SYNC.md: model
  struct User: Codable, Identifiable, Sendable, Equatable {
    struct Address: Codable, Sendable, Equatable {
      var street: String
      var city: String
      var state: String
      var zip: String
    }

    var uid: String
    var email: String
    var firstName: String
    var lastName: String
    var address: Address?

    // The local id is `uid`; on the wire it is "id" (the REST client's
    // managedObjectUidKey "uid" and responseObjectUidKey "id").
    var id: String { uid }

    enum CodingKeys: String, CodingKey {
      case uid = "id"
      case email
      case firstName = "first"
      case lastName = "last"
      case address
    }
  }
  // SYNC.md: end

  // SYNC.md: connect
  func makeUserSync(store: CaskStore, baseURL: URL, token: String) -> RemoteCollection<User> {
    let configuration = RemoteConfiguration(
      remoteIDKey: "id",  // where the id sits in the server's JSON
      envelope: .key("result"),  // {"result": {...}} or {"result": [...]}
      pagination: .nextURL(key: "next"),  // {"result": [...], "next": "/users?page=2"}
      timeout: 20,
      prepareRequest: { request in
        // Every request of this collection: the REST client's per-collection headers.
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("ios-app", forHTTPHeaderField: "x-app-id")
      })
    return RemoteCollection(store.collection(User.self), baseURL: baseURL, configuration: configuration)
  }
  // SYNC.md: end

  // SYNC.md: pages
  func pagedConfiguration(token: String) -> RemoteConfiguration {
    RemoteConfiguration(
      envelope: .key("result"),
      pagination: .page(parameter: "page", first: 1),  // GET /users?page=1, ?page=2, … until a page is empty
      prepareRequest: { $0.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") })
  }
  // SYNC.md: end

  // SYNC.md: pull
  func refresh(_ users: RemoteCollection<User>) async throws {
    // GET /users/u2, stored under "u2".
    let user = try await users.pull(id: "u2")
    print(user.firstName, user.address?.city ?? "-")

    // GET /users, then every "next" page; all objects stored in one atomic batch.
    let result = try await users.pullAll(progress: { progress in
      print("\(progress.objects) users, \(progress.bytes) bytes so far")
    })
    print("\(result.inserted) new, \(result.replaced) replaced")

    // Reading is local, and works offline: `local` is the ordinary CaskCollection.
    let springfield = try await users.local.filter { $0.address?.city == "Springfield" }
    print(springfield.count)
  }
  // SYNC.md: end

  // SYNC.md: push
  func createEditDelete(_ users: RemoteCollection<User>) async throws {
    var ann = User(uid: "ann", email: "ann@example.com", firstName: "Ann", lastName: "Lee", address: nil)
    ann = try await users.push(ann)  // POST /users: the server has not seen "ann" yet
    ann.address = User.Address(street: "1 Elm St", city: "Springfield", state: "IL", zip: "62701")
    ann = try await users.push(ann)  // PUT /users/ann, If-Match: the ETag of the last answer
    try await users.delete(id: "ann")  // DELETE /users/ann, If-Match likewise; then locally
  }
  // SYNC.md: end

  // SYNC.md: adjust
  func pullWithDetail(_ users: RemoteCollection<User>) async throws -> User {
    try await users.pull(
      id: "u1",
      adjust: { request in
        // This call only, after prepareRequest.
        request.setValue("full", forHTTPHeaderField: "X-Detail")
        request.timeoutInterval = 60
      })
  }
  // SYNC.md: end

  // SYNC.md: outbox
  func editOffline(_ users: RemoteCollection<User>) async throws {
    guard var user = try await users.local.get(id: "u1") else { return }
    user.email = "new@example.com"
    try await users.saveAndQueue(user)  // local save + queued PUT, in one atomic batch
    try await users.deleteAndQueue(id: "u2")  // local delete + queued DELETE, likewise
    print(users.pendingCount)  // 2: nothing has been sent yet
  }

  func sendQueued(_ users: RemoteCollection<User>) async throws {
    // In order, oldest first; each change leaves the queue once the server accepted it.
    let sent = try await users.pushPending(progress: { print("\($0.objects) sent") })
    print("\(sent) sent, \(users.pendingCount) left")
  }
  // SYNC.md: end

  // SYNC.md: launch
  func openAndResend(path: String, password: String, baseURL: URL, token: String) async throws -> CaskStore {
    let store = try CaskStore(path: path, password: password)
    let users = makeUserSync(store: store, baseURL: baseURL, token: token)
    // Whatever a previous run queued and did not get accepted is still there: send it.
    if users.pendingCount > 0 {
      try await users.pushPending()
    }
    return store
  }
  // SYNC.md: end

  // SYNC.md: conflict
  func sendQueuedHandlingConflicts(_ users: RemoteCollection<User>) async throws {
    do {
      try await users.pushPending()
    } catch SyncError.conflict(let id, let mine, let theirs) {
      // The server has another version of `id` than the one this change was based on.
      // `mine` is the JSON that was sent (nil for a delete), `theirs` the server's answer
      // body, if it sent one (here enveloped in "result"). The change is still queued, and
      // every change queued after it waits behind it.
      print("conflict on \(id): \(mine?.count ?? 0) bytes mine, \(theirs?.count ?? 0) theirs")
      try await keepMine(users, id: id)
    }
  }

  /// One way out: make the queued version win. `pull(id:)` records the server's current
  /// ETag (and, until the push, shows the server's version locally); the queued change then
  /// goes out with that ETag in If-Match, and the server's answer is stored.
  func keepMine(_ users: RemoteCollection<User>, id: String) async throws {
    _ = try await users.pull(id: id)
    try await users.pushPending()
  }
  // SYNC.md: end

  // SYNC.md: errors
  func explain(_ error: any Error) -> String {
    switch error {
    case SyncError.http(let status, let body):
      return "the server said \(status): \(body)"  // at most the first 200 bytes of its body
    case SyncError.conflict(let id, _, _):
      return "someone else changed \(id)"
    case SyncError.decoding(let detail):
      return "unexpected answer: \(detail)"
    case SyncError.transport(let detail):
      return "offline or no answer: \(detail)"  // timeouts too
    case SyncError.cancelled, is CancellationError:
      return "cancelled"
    case let error as CaskError:
      return "local store: \(error)"
    default:
      return "\(error)"
    }
  }
  // SYNC.md: end

  // SYNC.md: cancel
  func pullAllCancellable(_ users: RemoteCollection<User>) async throws {
    let task = Task { try await users.pullAll() }
    try await Task.sleep(nanoseconds: 100_000_000)
    task.cancel()  // ends the request in flight at once; nothing is stored
    switch await task.result {
    case .success(let result): print("finished first: \(result)")
    case .failure(let error): print(explain(error))
    }
  }
  // SYNC.md: end

  // SYNC.md: flat
  /// The REST client's server sent the address flat, beside the user's own fields ("address" for
  /// the street, then "city", "state", "zip"). The Swift type can stay nested: only its
  /// coding changes.
  struct FlatUser: Codable, Identifiable, Sendable, Equatable {
    typealias Address = User.Address  // the same nested type as User's

    var uid: String
    var email: String
    var firstName: String
    var lastName: String
    var address: Address?

    var id: String { uid }
  }
  // SYNC.md: end
}

// SYNC.md: flat-coding
extension SyncGuide.FlatUser {
  private enum Keys: String, CodingKey {
    case id, email, first, last, address, city, state, zip
  }

  init(from decoder: any Decoder) throws {
    let json = try decoder.container(keyedBy: Keys.self)
    uid = try json.decode(String.self, forKey: .id)
    email = try json.decode(String.self, forKey: .email)
    firstName = try json.decode(String.self, forKey: .first)
    lastName = try json.decode(String.self, forKey: .last)
    if let street = try json.decodeIfPresent(String.self, forKey: .address) {
      address = Address(
        street: street, city: try json.decode(String.self, forKey: .city),
        state: try json.decode(String.self, forKey: .state), zip: try json.decode(String.self, forKey: .zip))
    }
  }

  func encode(to encoder: any Encoder) throws {
    var json = encoder.container(keyedBy: Keys.self)
    try json.encode(uid, forKey: .id)
    try json.encode(email, forKey: .email)
    try json.encode(firstName, forKey: .first)
    try json.encode(lastName, forKey: .last)
    if let address {
      try json.encode(address.street, forKey: .address)
      try json.encode(address.city, forKey: .city)
      try json.encode(address.state, forKey: .state)
      try json.encode(address.zip, forKey: .zip)
    }
  }
}
// SYNC.md: end

@Suite("Docs/SYNC.md examples, against the test server")
struct SyncGuideExamplesTests {
  typealias User = SyncGuide.User
  let guide = SyncGuide()

  /// A store and a `makeUserSync` collection on a fresh server.
  private final class Setup: @unchecked Sendable {
    let server: RESTServer
    let directory: TemporaryDirectory
    let store: CaskStore
    let users: RemoteCollection<User>

    init(_ guide: SyncGuide, name: String) throws {
      server = try RESTServer()
      directory = try TemporaryDirectory(name)
      store = try CaskStore(path: directory.file("app.cask"), password: "pw", options: .init(durability: .never))
      users = guide.makeUserSync(store: store, baseURL: server.url("/users"), token: RESTServer.token)
    }

    func close() {
      try? store.close()
      server.stop()
      directory.remove()
    }
  }

  @Test("the model decodes the server's users, nested address and all, and pulls store them")
  func pulls() async throws {
    let setup = try Setup(guide, name: "guide-pull")
    defer { setup.close() }
    try await guide.refresh(setup.users)
    #expect(setup.users.local.count == 5)
    let u3 = try await setup.users.local.get(id: "u3")
    #expect(u3?.firstName == "First3")
    #expect(u3?.address == User.Address(street: "3 Main St", city: "Springfield", state: "IL", zip: "62703"))
    // The page-parameter configuration reaches the same five.
    let paged = RemoteCollection(
      setup.store.collection(User.self), baseURL: setup.server.url("/users"),
      configuration: guide.pagedConfiguration(token: RESTServer.token))
    #expect(try await paged.pullAll() == .init(inserted: 0, replaced: 5))
    #expect(try await guide.pullWithDetail(setup.users).uid == "u1")
  }

  @Test("push POSTs, then PUTs, delete DELETEs; the server applies each once")
  func pushes() async throws {
    let setup = try Setup(guide, name: "guide-push")
    defer { setup.close() }
    try await guide.createEditDelete(setup.users)
    #expect(try await setup.server.log() == ["POST ann", "PUT ann", "DELETE ann"])
    #expect(try await setup.users.local.contains(id: "ann") == false)
  }

  @Test("the outbox: queued locally at once, sent in order, resent after a reopen")
  func outbox() async throws {
    let setup = try Setup(guide, name: "guide-outbox")
    defer { setup.close() }
    _ = try await setup.users.pull(id: "u1")
    try await guide.editOffline(setup.users)
    #expect(try await setup.users.local.get(id: "u1")?.email == "new@example.com")
    #expect(try await setup.users.local.contains(id: "u2") == false)
    #expect(try await setup.server.log() == [])
    try setup.store.close()

    let store = try await guide.openAndResend(
      path: setup.directory.file("app.cask"), password: "pw", baseURL: setup.server.url("/users"),
      token: RESTServer.token)
    defer { try? store.close() }
    #expect(try await setup.server.log() == ["PUT u1", "DELETE u2"])
    let users = guide.makeUserSync(store: store, baseURL: setup.server.url("/users"), token: RESTServer.token)
    #expect(users.pendingCount == 0)
    try await guide.sendQueued(users)
  }

  @Test("a conflict stops the queue; keepMine sends the queued version with the new ETag")
  func conflict() async throws {
    let setup = try Setup(guide, name: "guide-conflict")
    defer { setup.close() }
    var user = try await setup.users.pull(id: "u1")
    // Someone else changes u1 on the server.
    _ = try await setup.server.request(
      "PUT", "/admin/users/u1", json: ["id": "u1", "email": "theirs@example.com", "first": "Theirs", "last": "L"])
    user.firstName = "Mine"
    try await setup.users.saveAndQueue(user)
    await #expect(throws: SyncError.self) { try await setup.users.pushPending() }
    #expect(setup.users.pendingCount == 1)
    #expect(try await setup.users.local.get(id: "u1")?.firstName == "Mine")

    try await guide.sendQueuedHandlingConflicts(setup.users)
    #expect(setup.users.pendingCount == 0)
    #expect(try await setup.users.local.get(id: "u1")?.firstName == "Mine")
    let (_, body) = try await setup.server.request("GET", "/users/u1")
    #expect(String(decoding: body, as: UTF8.self).contains("\"Mine\""))
  }

  @Test("errors and cancellation read as the guide says")
  func errorsAndCancellation() async throws {
    let setup = try Setup(guide, name: "guide-errors")
    defer { setup.close() }
    let stranger = guide.makeUserSync(store: setup.store, baseURL: setup.server.url("/users"), token: "nope")
    do {
      _ = try await stranger.pullAll()
      Issue.record("expected a 401")
    } catch {
      #expect(guide.explain(error).hasPrefix("the server said 401"))
      #expect(!guide.explain(error).contains("nope"))
    }
    let slow = guide.makeUserSync(store: setup.store, baseURL: setup.server.url("/slow"), token: RESTServer.token)
    try await guide.pullAllCancellable(slow)
    #expect(setup.store.count == 0)
    #expect(guide.explain(CancellationError()) == "cancelled")
  }

  @Test("FlatUser reads and writes the REST client's flat address, locally and on the server")
  func flatAddress() async throws {
    let json = Data(
      #"{"id":"f1","email":"f@example.com","first":"F","last":"L","address":"9 Oak Ave","city":"Salem","state":"OR","zip":"97301"}"#
        .utf8)
    let user = try JSONDecoder().decode(SyncGuide.FlatUser.self, from: json)
    #expect(user.address?.city == "Salem")
    #expect(try JSONDecoder().decode(SyncGuide.FlatUser.self, from: JSONEncoder().encode(user)) == user)

    let setup = try Setup(guide, name: "guide-flat")
    defer { setup.close() }
    let flat = RemoteCollection(
      setup.store.collection(SyncGuide.FlatUser.self), baseURL: setup.server.url("/users"),
      configuration: RemoteConfiguration(
        envelope: .key("result"),
        prepareRequest: { $0.setValue("Bearer \(RESTServer.token)", forHTTPHeaderField: "Authorization") }))
    #expect(try await flat.push(user) == user)
    let (_, body) = try await setup.server.request("GET", "/users/f1")
    #expect(String(decoding: body, as: UTF8.self).contains(#""city": "Salem""#))
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import RNCryptorCodec

@testable import CipherCaskSync

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The object the Kinto sync tests sync.
struct Note: Codable, Identifiable, Sendable, Equatable, Hashable {
  var id: String
  var title: String
  var count: Int
}

/// scrypt at a test's cost: end-to-end keys in milliseconds, not a quarter second.
let testKeyCost = RNCryptor.ScryptParameters(costFactor: 1 << 10, blockSize: 8, parallelism: 1)

/// One device: its own store of notes, synced with a bucket and collection on a server.
final class Device: @unchecked Sendable {
  let name: String
  let directory: TemporaryDirectory
  private(set) var store: CaskStore
  private(set) var notes: CaskCollection<Note>
  private(set) var sync: CaskSync<Note>
  let serverURL: URL
  let passphrase: String?
  let retry: RetryPolicy
  /// `KintoServer.datesInCommitOrder`: true but where devices write at the same time
  /// through Kinto on PostgreSQL.
  let datesInCommitOrder: Bool

  init(
    _ name: String, url: URL, passphrase: String? = nil, retry: RetryPolicy = RetryPolicy(attempts: 3, baseDelay: 0.05),
    datesInCommitOrder: Bool = true
  ) throws {
    self.datesInCommitOrder = datesInCommitOrder
    self.name = name
    serverURL = url
    self.passphrase = passphrase
    self.retry = retry
    directory = try TemporaryDirectory("kinto-\(name)")
    store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    notes = store.collection(Note.self, named: "notes")
    sync = try Self.makeSync(
      notes, url: url, passphrase: passphrase, retry: retry, datesInCommitOrder: datesInCommitOrder)
  }

  static func server(_ url: URL, retry: RetryPolicy, datesInCommitOrder: Bool = true) -> KintoServer {
    var server = KintoServer(url: url, user: KintoProcess.user, password: KintoProcess.password)
    server.datesInCommitOrder = datesInCommitOrder
    server.retry = retry
    server.timeout = 10
    server.pageSize = 7  // several pages in every test
    return server
  }

  static func makeSync(
    _ notes: CaskCollection<Note>, url: URL, passphrase: String?, retry: RetryPolicy, datesInCommitOrder: Bool = true
  ) throws -> CaskSync<Note> {
    try CaskSync(
      notes, server: server(url, retry: retry, datesInCommitOrder: datesInCommitOrder), bucket: "tests",
      collection: "notes", endToEndPassphrase: passphrase,
      keyCost: testKeyCost)
  }

  /// Closes and opens the store again, with a new `CaskSync`, as a later process would.
  func reopen() throws {
    try store.close()
    store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    notes = store.collection(Note.self, named: "notes")
    sync = try Self.makeSync(
      notes, url: serverURL, passphrase: passphrase, retry: retry, datesInCommitOrder: datesInCommitOrder)
  }

  // Synchronous on purpose: in an async test the collection's async overloads would be taken.
  func save(_ note: Note) throws { try notes.save(note) }
  @discardableResult func delete(_ id: String) throws -> Bool { try notes.delete(id: id) }
  func get(_ id: String) throws -> Note? { try notes.get(id: id) }
  func pending() async throws -> Int { try await sync.pendingCount }

  func all() throws -> [String: Note] {
    Dictionary(uniqueKeysWithValues: try notes.all().map { ($0.id, $0) })
  }

  deinit {
    try? store.close()
    directory.remove()
  }
}

extension KintoHTTP {
  /// Every note on the server, as the plain mode stores them.
  func notes() async throws -> [String: Note] {
    var result: [String: Note] = [:]
    for record in try await records().values {
      guard let id = record["localID"] as? String, let object = record["object"] else { continue }
      let note = try JSONDecoder().decode(Note.self, from: JSONSerialization.data(withJSONObject: object))
      result[id] = note
    }
    return result
  }

  /// Writes a note as the plain mode would (a fourth party editing on the server).
  @discardableResult
  func put(_ note: Note) async throws -> Int {
    let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(note))
    let (status, _, _) = try await request(
      "PUT", recordsPath + "/" + note.id, json: ["data": ["localID": note.id, "object": object]])
    return status
  }

}

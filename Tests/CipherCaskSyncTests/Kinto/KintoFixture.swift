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

  init(
    _ name: String, url: URL, passphrase: String? = nil, retry: RetryPolicy = RetryPolicy(attempts: 3, baseDelay: 0.05)
  ) throws {
    self.name = name
    serverURL = url
    self.passphrase = passphrase
    self.retry = retry
    directory = try TemporaryDirectory("kinto-\(name)")
    store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    notes = store.collection(Note.self, named: "notes")
    sync = try Self.makeSync(notes, url: url, passphrase: passphrase, retry: retry)
  }

  static func server(_ url: URL, retry: RetryPolicy) -> KintoServer {
    var server = KintoServer(url: url, user: KintoProcess.user, password: KintoProcess.password)
    server.retry = retry
    server.timeout = 10
    server.pageSize = 7  // several pages in every test
    return server
  }

  static func makeSync(_ notes: CaskCollection<Note>, url: URL, passphrase: String?, retry: RetryPolicy) throws
    -> CaskSync<Note>
  {
    try CaskSync(
      notes, server: server(url, retry: retry), bucket: "tests", collection: "notes", endToEndPassphrase: passphrase,
      keyCost: testKeyCost)
  }

  /// Closes and opens the store again, with a new `CaskSync`, as a later process would.
  func reopen() throws {
    try store.close()
    store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    notes = store.collection(Note.self, named: "notes")
    sync = try Self.makeSync(notes, url: serverURL, passphrase: passphrase, retry: retry)
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

/// Direct HTTP on a Kinto server, as another client (the "fourth party") or a check would do.
struct KintoHTTP {
  let url: URL
  var bucket = "tests"
  var collection = "notes"

  init(_ url: URL) { self.url = url }

  var recordsPath: String { "/buckets/\(bucket)/collections/\(collection)/records" }

  func request(_ method: String, _ path: String, json: Any? = nil, headers: [String: String] = [:]) async throws
    -> (Int, Data, [String: String])
  {
    var request = URLRequest(url: URL(string: url.absoluteString + path)!)
    request.httpMethod = method
    let credential = Data("\(KintoProcess.user):\(KintoProcess.password)".utf8).base64EncodedString()
    request.setValue("Basic \(credential)", forHTTPHeaderField: "Authorization")
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    if let json {
      request.httpBody = try JSONSerialization.data(withJSONObject: json)
      request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as? HTTPURLResponse
    var headers: [String: String] = [:]
    for (key, value) in http?.allHeaderFields ?? [:] {
      if let key = key as? String, let value = value as? String { headers[key.lowercased()] = value }
    }
    return (http?.statusCode ?? 0, data, headers)
  }

  /// Every record (tombstones excluded), by record id.
  func records() async throws -> [String: [String: Any]] {
    var result: [String: [String: Any]] = [:]
    var next: String? = url.absoluteString + recordsPath + "?_limit=1000"
    while let page = next {
      let (status, data, headers) = try await request("GET", String(page.dropFirst(url.absoluteString.count)))
      guard status == 200 else { throw KintoProcessError(description: "listing answered \(status)") }
      let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
      for record in object?["data"] as? [[String: Any]] ?? [] {
        if let id = record["id"] as? String { result[id] = record }
      }
      next = headers["next-page"]
    }
    return result
  }

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

  @discardableResult
  func delete(_ id: String) async throws -> Int {
    try await request("DELETE", recordsPath + "/" + id).0
  }
}

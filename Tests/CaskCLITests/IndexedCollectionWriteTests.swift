import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `cask` cannot compute a collection's index entries (it does not know the app's types), so
/// `put`, `delete` and `pull` on a collection whose indexes are recorded in the store fail with
/// exit 1 and write nothing, as `import` does.
@Suite("cask writes to an indexed collection are refused")
struct IndexedCollectionWriteTests {
  struct User: Codable, Identifiable, Sendable {
    var id: String
    var name: String
  }

  static let password = "correct horse"

  private func makeIndexedStore(_ cask: CaskRunner) throws -> String {
    let path = try cask.createStore("s", password: Self.password)
    let store = try CaskStore(path: path, password: Self.password, options: .init(durability: .never))
    defer { try? store.close() }
    let users = store.collection(User.self, named: "users", indexes: [.index("name", \.name)])
    try users.save(contentsOf: [User(id: "u1", name: "Ann"), User(id: "u9", name: "Bo")])
    return path
  }

  private func expectRefusal(_ result: CaskResult, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 1, "\(result.err)", sourceLocation: sourceLocation)
    #expect(
      result.err.contains("collection 'users' has secondary indexes recorded in the store"), "\(result.err)",
      sourceLocation: sourceLocation)
    #expect(result.err.contains("nothing was written"), sourceLocation: sourceLocation)
  }

  private func ids(_ cask: CaskRunner) throws -> [String] {
    let result = try cask.run(["keys", "s", "--collection", "users"], password: Self.password)
    #expect(result.status == 0, "\(result.err)")
    return result.out.split(separator: "\n").map(String.init)
  }

  @Test("put and delete --collection on an indexed collection exit 1 and write nothing")
  func putAndDeleteRefused() throws {
    let cask = try CaskRunner("indexed-put")
    defer { cask.remove() }
    _ = try makeIndexedStore(cask)
    expectRefusal(
      try cask.run(
        ["put", "s", "u2", "--collection", "users"], password: Self.password,
        stdin: Data(#"{"id":"u2","name":"Cy"}"#.utf8)))
    expectRefusal(try cask.run(["delete", "s", "u1", "--collection", "users"], password: Self.password))
    #expect(try ids(cask) == ["u1", "u9"])
    // Another collection, with no index, is written as before.
    let other = try cask.run(
      ["put", "s", "n1", "--collection", "notes"], password: Self.password, stdin: Data("hello".utf8))
    #expect(other.status == 0, "\(other.err)")
  }

  @Test("pull into an indexed collection exits 1 and writes nothing")
  func pullRefused() throws {
    let server = try RESTServer()
    defer { server.stop() }
    let cask = try CaskRunner("indexed-pull")
    defer { cask.remove() }
    _ = try makeIndexedStore(cask)
    let auth = try cask.headerFile(RESTServer.authorization)
    let pulled = try cask.run(
      ["pull", "s", server.address("/users"), "--collection", "users", "--id-key", "id"] + auth,
      password: Self.password)
    expectRefusal(pulled)
    #expect(try ids(cask) == ["u1", "u9"])
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `cask verify` also checks that each stored index agrees with its collection's objects.
@Suite("cask verify and indexes")
struct VerifyIndexTests {
  struct Item: Codable, Identifiable, Sendable {
    var id: String
    var tag: String
  }

  struct DriftedItem: Codable, Identifiable, Sendable {
    var id: String
    var tag: Int
  }

  @Test("an index whose build failed on an object that does not decode is reported as not complete")
  func verifyReportsFailedBuild() throws {
    let cask = try CaskRunner("verify-failed-build")
    defer { cask.remove() }
    let path = try cask.createStore("s", password: "pw")
    do {
      let store = try CaskStore(path: path, password: "pw")
      defer { try? store.close() }
      let items = store.collection(Item.self, named: "items", indexes: [.index("tag", \.tag)])
      try items.save(contentsOf: (0..<3).map { Item(id: "i\($0)", tag: "t") })
    }
    do {
      let store = try CaskStore(path: path, password: "pw")
      defer { try? store.close() }
      let drifted = store.collection(DriftedItem.self, named: "items", indexes: [.index("tag", \.tag)])
      #expect(throws: CollectionError.self) { try drifted.buildIndexes() }
    }
    let result = try cask.run(["verify", "s"], password: "pw")
    #expect(result.status == 0, "\(result.err)")
    #expect(result.out.contains("index 'tag' of collection 'items' is not complete"), "\(result.out)")
    let json = try cask.run(["verify", "s", "--json"], password: "pw")
    struct Report: Decodable {
      struct Incomplete: Decodable, Equatable {
        var collection: String
        var index: String
      }
      var incompleteIndexes: [Incomplete]
    }
    let report = try JSONDecoder().decode(Report.self, from: Data(json.out.utf8))
    #expect(report.incompleteIndexes == [.init(collection: "items", index: "tag")])
  }

  @Test("a store whose index and objects agree verifies clean; a stray object makes it exit 1")
  func verifyReportsIndexDisagreement() throws {
    let cask = try CaskRunner("verify-index")
    defer { cask.remove() }
    let path = try cask.createStore("s", password: "pw")
    do {
      let store = try CaskStore(path: path, password: "pw")
      let items = store.collection(Item.self, named: "items", indexes: [.index("tag", \.tag)])
      try items.save(contentsOf: (0..<3).map { Item(id: "i\($0)", tag: "t") })
      try store.close()
    }
    let clean = try cask.run(["verify", "s"], password: "pw")
    #expect(clean.status == 0, "\(clean.err)")
    do {
      let store = try CaskStore(path: path, password: "pw")
      try plantUnchecked(
        try JSONCaskCoder().encode(Item(id: "stray", tag: "t")), forKey: "items\u{0}stray", in: store)
      try store.close()
    }
    let result = try cask.run(["verify", "s"], password: "pw")
    #expect(result.status == 1)
    #expect(result.out.contains("index 'tag' of collection 'items'"), "\(result.out)")
    #expect(!result.out.contains("stray") && !result.err.contains("stray"))
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// An observed query on an index shows every commit that changes its results: the query's
/// re-run reads the index entries only after they took the commit in.
@Suite("Observed queries on an index miss no commit")
struct ObservedQueryTests {
  @Test("each of many commits that add a match is shown, awaited one by one")
  func everyCommitIsShown() async throws {
    let directory = try TemporaryDirectory("observed-index")
    defer { directory.remove() }
    let store = try CaskStore(path: directory.file("s.cask"), password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    let gigs = store.collection(Gig.self, named: "gigs", indexes: [.index("city", \.city)])
    var iterator = gigs.query().where(\.city, equals: "Braga").observe().makeAsyncIterator()
    #expect(try await iterator.next()?.isEmpty == true)
    let commits = testIterations(60)
    for number in 0..<commits {
      // A match and an object of another city in each commit; the results grow by one.
      try await gigs.save(contentsOf: [.make("b\(number)", city: "Braga"), .make("p\(number)", city: "Porto")])
      let shown = try await iterator.next()
      #expect(shown?.count == number + 1, "commit \(number)")
      guard shown?.count == number + 1 else { break }
    }
  }
}

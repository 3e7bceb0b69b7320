import CaskTestSupport
import CipherCask
import Foundation
import Testing

@Suite("Checking that indexes and objects agree")
struct IndexCheckTests {
  @Test(
    "an object written without keeping the index is reported by both checks; a delete takes its attached entry along")
  func undeclaredWriterIsReported() throws {
    let directory = try TemporaryDirectory("index-check")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    do {
      let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
      let gigs = store.collection(Gig.self, named: "gigs", indexes: [.index("city", \.city)])
      try gigs.save(contentsOf: (0..<5).map { Gig.make("g\($0)") })
      #expect(try store.checkIndexEntries().allSatisfy(\.isClean))
      #expect(try store.checkIndexEntries().map(\.entries) == [5])
      try store.close()
    }
    // Writes that did not keep the index (a tool that bypassed the write check).
    let store = try CaskStore(path: path, password: "pw", options: .init(durability: .never))
    defer { try? store.close() }
    try plantUnchecked(try JSONCaskCoder().encode(Gig.make("stray")), forKey: "gigs\u{0}stray", in: store)
    try plantUnchecked(nil, forKey: "gigs\u{0}g1", in: store)
    let checks = try store.checkIndexEntries()
    #expect(checks.map(\.objectsWithoutEntry) == [1])
    // The deleted object's entry was attached to its record (Docs/FORMAT.md, "Version 5:
    // attached keys"), so the delete took it along: no entry is left dangling.
    #expect(checks.map(\.danglingEntries) == [0])
    let gigs = store.collection(Gig.self, named: "gigs", indexes: [.index("city", \.city)])
    let report = try gigs.verifyIndexes()
    #expect(report.indexes["city"] == .init(missing: 1, extra: 0, memoryDiffers: false))
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

@Suite("No indexed value, index name or id reaches the disk in plaintext")
struct IndexLeakTests {
  private static let secrets = [
    "CITY-SECRET-LISBOA-0001", "ATTENDEE-SECRET-PERSON-02", "EMAIL-SECRET@EXAMPLE-03", "ID-SECRET-OBJECT-0004",
    "INDEX-NAME-SECRET-CITY", "COLLECTION-SECRET-NAME", "cidade-secreta-\u{E9}vora-05",
  ]

  @Test("after saves, updates, deletes, a build, a drop, compaction and close, no file holds one")
  func noPlaintextInAnyFile() throws {
    let directory = try TemporaryDirectory("index-secrecy")
    defer { directory.remove() }
    let path = directory.file("s.cask")
    let options = CaskStore.Options(durability: .always, segmentSizeLimit: 4096, autoCompaction: nil)
    do {
      let store = try CaskStore(path: path, password: "pw", options: options)
      let gigs = store.collection(
        Gig.self, named: Self.secrets[5],
        indexes: [
          .index(Self.secrets[4], \.city), .index("attendee", each: \.attendees), .unique("email", \.email),
          .index("cityEmail", \.city, \.email),
        ])
      var gig = Gig.make(Self.secrets[3], city: Self.secrets[0], email: Self.secrets[2])
      gig.attendees = [Self.secrets[1]]
      try gigs.save(gig)
      for n in 0..<30 { try gigs.save(.make("filler-\(n)", city: Self.secrets[6])) }
      try gigs.update(id: Self.secrets[3]) { $0.seats = 3 }
      try gigs.delete(id: "filler-0")
      #expect(try gigs.query().where(\.city, equals: Self.secrets[0]).count() == 1)
      #expect(
        try gigs.query().where(\.city, equals: Self.secrets[0]).where(\.email, equals: Self.secrets[2]).count() == 1)
      let later = store.collection(
        Gig.self, named: Self.secrets[5], indexes: [.index(Self.secrets[4], \.city), .index("seats", \.seats)])
      try later.buildIndexes()
      try later.dropIndex("email")
      try store.compact()
      try store.close()
    }
    var checked = 0
    for name in try FileManager.default.contentsOfDirectory(atPath: path) {
      let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
      checked += 1
      for secret in Self.secrets {
        #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(name) holds an indexed plaintext")
        // The texts of index entries: strings as they are (no escape is needed for these).
        let prefix = Data(secret.utf8.prefix(10))
        #expect(bytes.range(of: prefix) == nil, "\(name) holds a part of an indexed plaintext")
      }
    }
    #expect(checked >= 2)
  }
}

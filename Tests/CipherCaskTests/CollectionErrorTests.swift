import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// `CollectionError`'s `==` and descriptions: every case equals itself with the same details
/// and no other, and no description quotes an id.
@Suite("Collection errors compare by case and details")
struct CollectionErrorTests {
  struct Underlying: Error {}

  /// One value of every case, each with details no other value shares.
  static let samples: [CollectionError] = [
    .decoding(collection: "c", id: "1", underlying: Underlying()), .invalidImport(reason: "r", line: 1),
    .uniqueViolation(collection: "c", index: "i"), .indexNotDeclared(collection: "c", index: "i"),
    .invalidIndex(collection: "c", reason: "r"), .indexValueTooLong(collection: "c", index: "i"),
  ]

  @Test("each case equals itself and no other case")
  func everyCaseEqualsItselfOnly() {
    for (i, lhs) in Self.samples.enumerated() {
      for (j, rhs) in Self.samples.enumerated() {
        #expect((lhs == rhs) == (i == j), "\(lhs) vs \(rhs)")
      }
    }
    let first = CollectionError.decoding(collection: "c", id: "1", underlying: Underlying())
    #expect(first == .decoding(collection: "c", id: "1", underlying: CancellationError()))
    #expect(first != .decoding(collection: "c", id: "2", underlying: Underlying()))
    #expect(CollectionError.invalidImport(reason: "r", line: 1) != .invalidImport(reason: "r", line: nil))
  }

  @Test("descriptions keep the import line and leave out a decoding error's id")
  func descriptionsNameThePlaceNotTheID() {
    #expect(
      CollectionError.invalidImport(reason: "malformed JSON", line: 7).description
        == "invalid import at line 7: malformed JSON")
    #expect(CollectionError.invalidImport(reason: "r", line: nil).description == "invalid import: r")
    let decoding = CollectionError.decoding(collection: "events", id: "secret-id", underlying: Underlying())
    #expect(decoding.description == "an object of collection 'events' does not decode: Underlying")
    for error in Self.samples { #expect(!error.description.isEmpty) }
  }
}

import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// Ids are told apart by their bytes, as keys are: two ids equal to Swift's `==` (canonically
/// equivalent) are two objects, and an id type that cannot take another type's id passes over it.
@Suite("Collection ids: equivalent ids, ids another type cannot hold")
struct CollectionIDTests {
  @Test("upsert counts two ids that differ only in Unicode normalization as the two objects they store")
  func canonicallyEquivalentIdsAreCountedAsStored() throws {
    try withStore { store throws in
      let readings = store.collection(Reading.self)
      let composed = "caf\u{E9}"  // é as one code point
      let decomposed = "cafe\u{301}"  // e + combining acute: == in Swift, another key on disk
      let result = try readings.upsert([Reading(id: composed, value: 1), Reading(id: decomposed, value: 2)])
      // The engine keeps keys by their bytes, so both objects are stored.
      #expect(readings.count == 2)
      #expect(result == .init(inserted: readings.count, replaced: 0))
    }
  }

  @Test("update refuses a change of id to a canonically equivalent id, which is another key")
  func updateToEquivalentIdIsRefused() throws {
    try withStore { store throws in
      let readings = store.collection(Reading.self)
      let composed = "caf\u{E9}"
      let decomposed = "cafe\u{301}"
      try readings.save(Reading(id: composed, value: 1))
      // Accepted, the object would be stored under the old key with the new id, and
      // `get(id: updated.id)` would not find the object `update` just returned.
      #expect(throws: CaskError.self) { try readings.update(id: composed) { $0.id = decomposed } }
      #expect(throws: CaskError.self) { try readings.updateAll(where: { _ in true }) { $0.id = decomposed } }
      #expect(try readings.get(id: composed)?.id.utf8.elementsEqual(composed.utf8) == true)
    }
  }

  /// An id type that is one `Character`, whose `init(_:)` traps on any other text.
  struct Letter: Codable, Identifiable, Sendable, Equatable {
    var id: Character
    var word: String

    enum CodingKeys: String, CodingKey { case id, word }

    init(id: Character, word: String) {
      self.id = id
      self.word = word
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      let text = try container.decode(String.self, forKey: .id)
      guard text.count == 1, let first = text.first else {
        throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "not one character")
      }
      id = first
      word = try container.decode(String.self, forKey: .word)
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(String(id), forKey: .id)
      try container.encode(word, forKey: .word)
    }
  }

  struct Label: Codable, Identifiable, Sendable, Equatable {
    var id: String
  }

  @Test("a collection of Character ids passes over ids of another type that are not one character, without a trap")
  func characterIDsDoNotTrap() throws {
    try withStore("character-ids") { store in
      let labels = store.collection(Label.self, named: "t")
      try labels.save(contentsOf: [Label(id: ""), Label(id: "ab")])
      let letters = store.collection(Letter.self, named: "t")
      try letters.save(Letter(id: "é", word: "été"))
      #expect(try letters.ids() == ["é"])
      #expect(try letters.first { $0.word == "été" }?.id == "é")
      #expect(try labels.ids().count == 3, "the other type sees every key, its own and the letter's")
    }
  }
}

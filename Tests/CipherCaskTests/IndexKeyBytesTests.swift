import CaskTestSupport
import Foundation
import Testing

@testable import CipherCask

/// The byte-level builders and splitters of index store keys, against the plain string
/// operations they replace: a key made or cut at the wrong byte would file an entry under
/// another text or id, and a query would answer wrongly without any error.
@Suite("Index store keys made and split as bytes")
struct IndexKeyBytesTests {
  /// Parts that trip byte offsets: empty, multi-byte UTF-8, a combining mark just before a
  /// separator (a `Character` boundary is not a byte boundary), U+0001 and U+0000 inside an id.
  private static let parts = [
    "", "a", "Évora", "e\u{301}", "日本語", "🇵🇹", "x\u{1}y", "\u{1}cask.index\u{1}city\u{1}0123456789abcdef\u{1}events",
  ]
  private static let ids = ["", "1", "é", "e\u{301}", "a\u{0}b", "日本", "x\u{0}"]

  @Test("an entry key is the group, U+0000, the text, U+0000 and the id, byte for byte")
  func entryKeyMatchesConcatenation() {
    for group in Self.parts where !group.isEmpty {
      for text in Self.parts {
        for id in Self.ids {
          let key = IndexStoreKeys.entryKey(group: group, text: text, id: id)
          let expected = Array(group.utf8) + [0] + Array(text.utf8) + [0] + Array(id.utf8)
          #expect(
            Array(key.utf8) == expected, "group \(Array(group.utf8)) text \(Array(text.utf8)) id \(Array(id.utf8))")
        }
      }
    }
  }

  @Test("an entry key made from a bridged or sliced string holds the same bytes")
  func entryKeyFromNonNativeStrings() {
    let text = String(Substring("--Lisbon--".dropFirst(2).dropLast(2)))
    let id = NSString(string: "id-é").description
    let key = IndexStoreKeys.entryKey(group: "g", text: text, id: id)
    #expect(Array(key.utf8) == Array("g\u{0}Lisbon\u{0}id-é".utf8))
  }

  @Test("a store key splits at its first U+0000 into the same bytes as a search of its UTF-8")
  func splitKeyMatchesUTF8Search() throws {
    for group in Self.parts {
      for rest in Self.ids + Self.parts {
        let key = group + "\u{0}" + rest
        let split = try #require(IndexStoreKeys.splitKey(key))
        let zero = try #require(key.utf8.firstIndex(of: 0))
        #expect(Array(split.group.utf8) == Array(key.utf8[..<zero]), "key \(Array(key.utf8))")
        #expect(Array(split.rest.utf8) == Array(key.utf8[key.utf8.index(after: zero)...]), "key \(Array(key.utf8))")
        let bytes = try #require(
          Array(key.utf8).withUnsafeBytes {
            IndexStoreKeys.splitKey(bytes: $0).map { (Array($0.group), Array($0.rest)) }
          })
        #expect(bytes.0 == Array(split.group.utf8))
        #expect(bytes.1 == Array(split.rest.utf8))
      }
    }
    #expect(IndexStoreKeys.splitKey("no separator") == nil)
    #expect(Array("none".utf8).withUnsafeBytes { IndexStoreKeys.splitKey(bytes: $0) } == nil)
  }

  @Test("an index text too long for a store key is refused by name, with the collection")
  func tooLongTextIsRefused() throws {
    try withIndexStore { store, _ in
      let gigs = store.gigs()
      let long = String(repeating: "x", count: 70_000)
      do {
        try gigs.save(.make("a", city: long))
        Issue.record("a city of 70,000 bytes was indexed")
      } catch CollectionError.indexValueTooLong(let collection, let index) {
        #expect(collection == "gigs")
        #expect(index == "city")
      }
      #expect(try gigs.get(id: "a") == nil)
      try gigs.save(.make("a", city: "Lisbon"))
      #expect(try gigs.query().where(\.city, equals: "Lisbon").ids() == ["a"])
    }
  }
}

import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Groups are told apart by the bytes of their names, as the store tells keys apart: two names
/// equal to Swift's `==` (canonically equivalent) but of other bytes are two groups, in a
/// transaction's `keys(inGroup:)` and in `groups()` alike.
@Suite("Groups are told apart by their bytes")
struct GroupKeyTests {
  /// é as one code point, and e + combining acute: equal to Swift's `==`, other bytes.
  private static let composed = "caf\u{E9}"
  private static let decomposed = "cafe\u{301}"

  private static let options = CaskStore.Options(durability: .never, autoCompaction: nil)

  @Test("a transaction's keys(inGroup:) tells groups apart by their bytes, as the store does")
  func transactionGroupByBytes() throws {
    try withStore(options: Self.options) { store, _ throws in
      let (composed, decomposed) = (Self.composed, Self.decomposed)
      let twinKey = decomposed + "\u{0}" + "1"
      let seenInside = try store.transaction { transaction -> [String] in
        try transaction.put(Data("x".utf8), forKey: twinKey)
        return try transaction.keys(inGroup: composed)
      }
      let seenAfter = try store.keys(inGroup: composed)
      #expect(seenAfter.isEmpty)
      #expect(
        seenInside.map { Array($0.utf8) } == seenAfter.map { Array($0.utf8) },
        "inside the transaction group \"caf\\u{E9}\" listed a key of group \"cafe\\u{301}\"")
    }
  }

  @Test("groups() counts two groups whose names differ only in normalization separately")
  func groupsByBytes() throws {
    try withStore(options: Self.options) { store, _ throws in
      let (composed, decomposed) = (Self.composed, Self.decomposed)
      try store.put(Data("a".utf8), forKey: composed + "\u{0}1")
      try store.put(Data("b".utf8), forKey: decomposed + "\u{0}1")
      try store.put(Data("c".utf8), forKey: decomposed + "\u{0}2")
      #expect(store.count(inGroup: composed) == 1)
      #expect(store.count(inGroup: decomposed) == 2)
      #expect(
        store.groups()
          == [.init(group: composed, count: 1), .init(group: decomposed, count: 2)]
          .sorted { $0.group.utf8.lexicographicallyPrecedes($1.group.utf8) })
    }
  }
}

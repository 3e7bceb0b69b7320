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

  /// More groups than the few found by their bytes, alternating key by key, some emptied
  /// (whose tables are removed and the last moved into their place) and written again:
  /// every key stays in its own group, also in the packed listing and after a reopen.
  /// Prevents a key landing in the table of a group that moved or of one with a similar name.
  @Test("keys alternating among many groups, some emptied and refilled, stay in their groups")
  func manyGroupsEmptiedAndRefilled() throws {
    try withStore(options: Self.options) { store, directory throws in
      // Names that share their first bytes with others, so a match of a prefix would be caught.
      let names = (0..<20).map { "group-\($0)" } + ["group-", "g", "group-1-"]
      var model: [String: Set<String>] = [:]
      for round in 0..<3 {
        for index in 0..<30 {
          for name in names {
            let key = name + "\u{0}" + "\(round)-\(index)"
            try store.put(Data(), forKey: key)
            model[name, default: []].insert(key)
          }
        }
        for name in names.enumerated().filter({ $0.offset % 3 == round }).map(\.element) {
          for key in try store.keys(inGroup: name) { try store.delete(key) }
          model[name] = nil
        }
      }
      func check(_ store: CaskStore) throws {
        for (group, keys) in model {
          #expect(Set(try store.keys(inGroup: group)) == keys, "group \(group)")
          let packed = try store.packedKeys(inGroup: group)
          let listed = (0..<packed.count).map { String(decoding: packed.bytes[packed.range(of: $0)], as: UTF8.self) }
          #expect(Set(listed) == keys, "packed group \(group)")
        }
        #expect(store.groups().map(\.group).sorted() == model.keys.sorted())
      }
      try check(store)
      try store.close()
      let reopened = try CaskStore(path: directory, password: testPassword, options: Self.options)
      defer { try? reopened.close() }
      try check(reopened)
    }
  }
}

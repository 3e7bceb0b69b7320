import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// `forEachEntry(inGroup:)`: a group's keys and values one at a time, in file order, as they
/// were when the call began; a body that throws stops the reading.
@Suite("Scanning a group one entry at a time")
struct GroupScanTests {
  private static func withGroup(_ body: (CaskStore, [String]) throws -> Void) throws {
    try withStore(label: "group-scan") { store, _ throws in
      let keys = ["g\u{0}c", "g\u{0}a", "g\u{0}d", "g\u{0}b"]
      for key in keys { try store.put(Data("value of \(key)".utf8), forKey: key) }
      try store.put(Data("other".utf8), forKey: "h\u{0}a")
      try store.put(Data("other".utf8), forKey: "g")
      try body(store, keys)
    }
  }

  @Test("every key of the group, in the order written, and nothing of other groups; entries agrees")
  func everyEntryInFileOrder() throws {
    try Self.withGroup { store, keys in
      var seen: [String] = []
      try store.forEachEntry(inGroup: "g") { key, value in
        seen.append(key)
        #expect(value == Data("value of \(key)".utf8))
      }
      #expect(seen == keys)
      #expect(try store.entries(inGroup: "g").map(\.key) == keys)
    }
  }

  @Test("a body that throws stops the scan there, and its error comes out")
  func throwingStops() throws {
    struct Enough: Error {}
    try Self.withGroup { store, keys in
      var seen: [String] = []
      #expect(throws: Enough.self) {
        try store.forEachEntry(inGroup: "g") { key, _ in
          seen.append(key)
          if seen.count == 2 { throw Enough() }
        }
      }
      #expect(seen == Array(keys.prefix(2)))
    }
  }

  @Test("keys deleted or overwritten while the body runs are read as they were when the scan began")
  func oneMoment() throws {
    try Self.withGroup { store, keys in
      var seen: [String: String] = [:]
      try store.forEachEntry(inGroup: "g") { key, value in
        if key == keys[0] {
          try store.delete(keys[2])
          try store.put(Data("new".utf8), forKey: keys[3])
          try store.put(Data("added".utf8), forKey: "g\u{0}z")
          try store.compact()
        }
        seen[key] = String(decoding: value, as: UTF8.self)
      }
      #expect(seen == Dictionary(uniqueKeysWithValues: keys.map { ($0, "value of \($0)") }))
      #expect(try store.get(keys[2]) == nil && store.get(keys[3]) == Data("new".utf8))
    }
  }
}

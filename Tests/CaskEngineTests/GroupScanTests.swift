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

  /// Where `key`'s record is, and its segment's path.
  private static func record(of key: String, in store: CaskStore) throws -> (RecordLocation, String) {
    try store.state.withLock { state in
      let location = try #require(state.directory.entries(inGroup: "g").first { $0.key == key }?.location)
      return (location, try #require(state.segments[location.segment]).path)
    }
  }

  /// Scans group "g", whose values are "value of KEY": the keys read (each value checked) and
  /// the keys reported as damage, in order.
  private static func scanReportingDamage(_ store: CaskStore) throws -> (seen: [String], damaged: [String]) {
    var damaged: [String] = []
    var seen: [String] = []
    let onDamage = { (key: String, error: CaskError) in
      guard case .corrupt = error else {
        Issue.record("not reported as damage: \(error)")
        return
      }
      damaged.append(key)
    }
    try store.forEachEntry(inGroup: "g", onDamage: onDamage) { key, value in
      seen.append(key)
      #expect(value == Data("value of \(key)".utf8))
    }
    return (seen, damaged)
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

  @Test("a group read among other groups' values of every size: every value in file order, across read windows")
  func readsAmongOtherValues() throws {
    var random = SeededRandom.make(test: "readsAmongOtherValues")
    try withStore(label: "group-scan-mixed") { store, _ throws in
      var expected: [String: Data] = [:]
      var order: [String] = []
      for index in 0..<testIterations(400) {
        // Sizes around the scan window and the rule for sparse runs: a few bytes to 300 KiB.
        let size = [1, 40, 900, 5_000, 70_000, 300_000][Int.random(in: 0..<6, using: &random)]
        if Bool.random(using: &random) {
          let key = "g\u{0}\(index)"
          expected[key] = random.bytes(size)
          order.append(key)
          try store.put(expected[key]!, forKey: key)
        } else {
          try store.put(random.bytes(size), forKey: "other\u{0}\(index)")
        }
      }
      var seen: [String] = []
      try store.forEachEntry(inGroup: "g") { key, value in
        seen.append(key)
        #expect(value == expected[key], "\(key)")
      }
      #expect(seen == order)
    }
  }

  @Test("a group spread over many segments and a compaction's outputs is read oldest segment first, by offset")
  func readsAcrossSegmentsInFileOrder() throws {
    var random = SeededRandom.make(test: "readsAcrossSegmentsInFileOrder")
    let options = CaskStore.Options(durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)
    try withStore(options: options, label: "group-scan-segments") { store, _ throws in
      var expected: [String: Data] = [:]
      for round in 0..<3 {
        for _ in 0..<testIterations(150) {
          // The last round writes few of the group's keys, so that records written before the
          // compaction (in segments with lower ids than its outputs) stay live.
          if round < 2 || Int.random(in: 0..<10, using: &random) == 0 {
            let key = "g\u{0}\(Int.random(in: 0..<120, using: &random))"
            expected[key] = random.bytes(Int.random(in: 1..<600, using: &random))
            try store.put(expected[key]!, forKey: key)
          }
          try store.put(random.bytes(40), forKey: "other\u{0}\(Int.random(in: 0..<50, using: &random))")
        }
        // Compaction outputs sort among the segments they replaced, not by their ids.
        if round == 1 { _ = try store.compact() }
      }
      // File order from the index, sorted here by each segment's order and the offset.
      let located = try store.state.withLock { state in
        try state.directory.entries(inGroup: "g").map { entry in
          (key: entry.key, segment: try #require(state.segments[entry.location.segment]), offset: entry.location.offset)
        }
      }
      let inFileOrder = located.sorted { ($0.segment.order, $0.offset) < ($1.segment.order, $1.offset) }.map(\.key)
      #expect(Set(located.map(\.segment.id)).count > 10)
      #expect(located.contains { $0.segment.order.sub > 0 }, "no record in a compaction output")
      var seen: [String] = []
      try store.forEachEntry(inGroup: "g") { key, value in
        seen.append(key)
        #expect(value == expected[key], "\(key)")
      }
      #expect(seen == inFileOrder)
      #expect(seen.count == expected.count)
    }
  }

  @Test("a group of a few keys in segments far apart in id is read oldest segment first")
  func readsKeysFarApartInFileOrder() throws {
    let options = CaskStore.Options(durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)
    try withStore(options: options, label: "group-scan-sparse") { store, _ throws in
      // Far more segments between the group's records than it has records.
      let filler = Data(repeating: 7, count: 3_000)
      try store.put(Data("first".utf8), forKey: "g\u{0}b")
      for index in 0..<60 { try store.put(filler, forKey: "other\u{0}\(index % 10)") }
      try store.put(Data("second".utf8), forKey: "g\u{0}a")
      for index in 0..<60 { try store.put(filler, forKey: "other\u{0}\(index % 10)") }
      try store.put(Data("third".utf8), forKey: "g\u{0}c")
      let spread = store.state.withLock { state in
        let ids = state.directory.entries(inGroup: "g").map(\.location.segment)
        return Int(ids.max()! - ids.min()!)
      }
      #expect(spread > 64)
      var seen: [String] = []
      try store.forEachEntry(inGroup: "g") { key, _ in seen.append(key) }
      #expect(seen == ["g\u{0}b", "g\u{0}a", "g\u{0}c"])
    }
  }

  @Test("a damaged record among neighbours read together is reported alone; the others are read")
  func damagedRecordInARun() throws {
    try withTemporaryDirectory("group-scan-damage") { directory throws in
      let path = directory.file("store.cask")
      var store = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      let keys = (0..<40).map { "g\u{0}\($0)" }
      for key in keys { try store.put(Data("value of \(key)".utf8), forKey: key) }
      let (location, segmentPath) = try Self.record(of: keys[17], in: store)
      try store.close()
      // The last byte of the record: its value message's HMAC.
      try FileDamage.flipByte(at: Int(location.offset) + Int(location.length) - 1, in: segmentPath)
      store = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      defer { try? store.close() }
      let (seen, damaged) = try Self.scanReportingDamage(store)
      #expect(damaged == [keys[17]])
      #expect(seen == keys.filter { $0 != keys[17] })
    }
  }

  @Test("a segment cut short under a scan: the records it still holds are read, each one past the cut is reported")
  func segmentCutUnderAScan() throws {
    try withStore(label: "group-scan-cut") { store, _ throws in
      let keys = (0..<30).map { "g\u{0}\($0)" }
      for key in keys { try store.put(Data("value of \(key)".utf8), forKey: key) }
      let (location, segmentPath) = try Self.record(of: keys[20], in: store)
      // Into the middle of the 21st record: one read covers all 30, and comes back short.
      try FileDamage.truncate(segmentPath, to: Int(location.offset) + 5)
      let (seen, damaged) = try Self.scanReportingDamage(store)
      #expect(seen == Array(keys[..<20]))
      #expect(damaged == Array(keys[20...]))
    }
  }
}

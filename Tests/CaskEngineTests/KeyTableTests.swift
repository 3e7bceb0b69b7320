import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// `KeyTable` (the index's open-addressing table) against a `Dictionary` model: inline and
/// long keys, updates, removals with backward shifting across the table's end, growth, an
/// exact reservation, and copy on write.
@Suite("KeyTable never diverges from a Dictionary")
struct KeyTableTests {
  /// A key of 1 to 40 ASCII bytes from a small alphabet, so that keys repeat (updates and
  /// removals of present keys) and both sides of the 16-byte inline limit are common.
  private static func randomKey(using random: inout SeededRandom, space: Int) -> String {
    let number = Int.random(in: 0..<space, using: &random)
    let length = 1 + number % 40
    let stem = String(number, radix: 36)
    return String(repeating: stem, count: length / stem.count + 1).prefix(length).description
  }

  private static func randomLocation(using random: inout SeededRandom) -> RecordLocation {
    RecordLocation(
      segment: UInt32.random(in: 1...4, using: &random), offset: UInt32.random(in: 0...UInt32.max, using: &random),
      length: UInt32.random(in: 0...UInt32.max, using: &random))
  }

  private static func entries(of table: KeyTable) -> [String: RecordLocation] {
    var entries: [String: RecordLocation] = [:]
    table.forEachEntry { key, location in
      #expect(entries.updateValue(location, forKey: key) == nil, "key listed twice: \(key)")
    }
    return entries
  }

  private static func expectMatches(
    _ table: KeyTable, _ model: [String: RecordLocation], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(table.count == model.count, sourceLocation: sourceLocation)
    #expect(entries(of: table) == model, sourceLocation: sourceLocation)
    for (key, location) in model {
      let found = Array(key.utf8).withUnsafeBytes { table[$0] }
      #expect(found == location, "key \(key)", sourceLocation: sourceLocation)
    }
    for segment in UInt32(1)...4 {
      var listed: [String: RecordLocation] = [:]
      table.forEachEntryBytes(inSegment: segment) { key, location in
        listed[String(decoding: key, as: UTF8.self)] = location
      }
      #expect(listed == model.filter { $0.value.segment == segment }, sourceLocation: sourceLocation)
    }
  }

  @Test("random updates, removals and lookups match the model, through growth and copies")
  func matchesModel() {
    var random = SeededRandom.make(test: "KeyTableTests.matchesModel")
    for run in 0..<testIterations(4) {
      let space = [8, 64, 600, 5000][run % 4]
      var table = KeyTable()
      var model: [String: RecordLocation] = [:]
      if run % 2 == 1 { table.reserveCapacity(space / 2) }
      var snapshot: (table: KeyTable, model: [String: RecordLocation])?
      for step in 0..<(space * 6) {
        let key = Self.randomKey(using: &random, space: space)
        let bytes = Array(key.utf8)
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<6:
          let location = Self.randomLocation(using: &random)
          let old = bytes.withUnsafeBytes { table.updateValue(location, forKey: $0) }
          #expect(old == model.updateValue(location, forKey: key), "update \(key), run \(run), step \(step)")
        case 6..<9:
          let old = bytes.withUnsafeBytes { table.removeValue(forKey: $0) }
          #expect(old == model.removeValue(forKey: key), "remove \(key), run \(run), step \(step)")
        default:
          let found = bytes.withUnsafeBytes { table[$0] }
          #expect(found == model[key], "lookup \(key), run \(run), step \(step)")
        }
        // A copy taken midway must not see later changes (copy on write).
        if step == space * 3 { snapshot = (table, model) }
      }
      Self.expectMatches(table, model)
      if let snapshot { Self.expectMatches(snapshot.table, snapshot.model) }
      // Emptying the table through removals leaves nothing behind.
      for key in model.keys {
        let removed = Array(key.utf8).withUnsafeBytes { table.removeValue(forKey: $0) }
        #expect(removed == model[key])
      }
      Self.expectMatches(table, [:])
    }
  }

  @Test("a reservation is exact: the reserved number of keys goes in without growing")
  func reservationHolds() {
    for keys in [1, 7, 100, 4096] {
      var table = KeyTable()
      table.reserveCapacity(keys)
      let capacity = table.capacity
      #expect(capacity * 4 >= keys * 5, "at most 80% full after \(keys) keys")
      for number in 0..<keys {
        let key = "key-\(number)"
        let location = RecordLocation(segment: 1, offset: UInt32(number), length: 1)
        _ = Array(key.utf8).withUnsafeBytes { table.updateValue(location, forKey: $0) }
      }
      #expect(table.capacity == capacity, "\(keys) keys")
      #expect(table.count == keys)
    }
  }

  @Test("the empty key is never found, and an empty table answers nil")
  func emptyCases() {
    var table = KeyTable()
    #expect([UInt8]().withUnsafeBytes { table[$0] } == nil)
    #expect(Array("x".utf8).withUnsafeBytes { table[$0] } == nil)
    #expect(Array("x".utf8).withUnsafeBytes { table.removeValue(forKey: $0) } == nil)
    _ = Array("x".utf8).withUnsafeBytes {
      table.updateValue(RecordLocation(segment: 1, offset: 2, length: 3), forKey: $0)
    }
    #expect([UInt8]().withUnsafeBytes { table[$0] } == nil)
    #expect([UInt8]().withUnsafeBytes { table.removeValue(forKey: $0) } == nil)
    #expect(table.count == 1)
  }

  @Test("removing most long keys packs the arena; the rest and an earlier copy stay readable")
  func arenaPacksAfterRemovals() {
    var random = SeededRandom.make(test: "KeyTableTests.arenaPacksAfterRemovals")
    var table = KeyTable()
    var model: [String: RecordLocation] = [:]
    for number in 0..<testIterations(4000) {
      let length = 17 + number % 60
      let key = String(repeating: String(number, radix: 36) + "-", count: length).prefix(length).description
      let location = Self.randomLocation(using: &random)
      _ = Array(key.utf8).withUnsafeBytes { table.updateValue(location, forKey: $0) }
      model[key] = location
    }
    let copy = table
    let copyModel = model
    let full = table.allocatedBytes
    for key in model.keys.shuffled(using: &random).prefix(model.count * 9 / 10) {
      let removed = Array(key.utf8).withUnsafeBytes { table.removeValue(forKey: $0) }
      #expect(removed == model.removeValue(forKey: key), "remove \(key)")
    }
    Self.expectMatches(table, model)
    Self.expectMatches(copy, copyModel)
    #expect(table.allocatedBytes < full, "\(table.allocatedBytes) bytes after removals, \(full) before")
  }
}

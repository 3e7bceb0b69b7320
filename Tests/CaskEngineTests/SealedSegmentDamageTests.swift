import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

@Suite("Damage in a sealed segment is reported and never served as data")
struct SealedSegmentDamageTests {
  /// Offsets inside `record` worth damaging: each header field, the key message, the value
  /// message and the last byte.
  private static func targets(in record: RecordSpan) -> [Int] {
    let body = record.offset + CaskFormat.recordHeaderLength
    return [
      record.offset, record.offset + 4, record.offset + 5, record.offset + 8, record.offset + 16,
      record.offset + 20, body + 3, body + 80, record.offset + record.length / 2, record.end - 1,
    ]
  }

  private static func sampledRecords(_ records: [RecordSpan]) -> [RecordSpan] {
    [records[0], records[records.count / 2], records[records.count - 1]]
  }

  /// A key the store lists must be one it has: `count`, `keys()` and `contains` agree, and a
  /// key that reads as absent is not listed.
  private static func expectConsistent(
    _ store: CaskStore, about key: String, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let keys = try store.keys()
    #expect(store.count == keys.count, sourceLocation: sourceLocation)
    #expect(try store.contains(key) == keys.contains(key), sourceLocation: sourceLocation)
    if (try? store.get(key)) == .some(nil) {
      #expect(!keys.contains(key), "an unreadable key is still listed", sourceLocation: sourceLocation)
    }
  }

  @Test("read through its hint, a flipped record byte makes get throw corrupt and verify name file and offset")
  func flipReadThroughHint() throws {
    let fixture = try DamageFixture("sealed-hint", singles: 30)
    defer { fixture.remove() }
    try #require(fixture.segments.count >= 3)
    let segment = fixture.segments[0]
    for record in Self.sampledRecords(fixture.records[segment]!) {
      for offset in Self.targets(in: record) {
        let path = try fixture.copy("flip-\(offset)")
        try FileDamage.flipByte(at: offset, in: "\(path)/\(segment)")
        let store = try fixture.open(path)
        // The hint still describes the segment, so open does not read the damaged record...
        #expect(store.stats().recovery.segmentsFromHints == fixture.segments.count)
        #expect(store.count == fixture.values.count)
        // ...but reading it never returns other bytes, and everything else is served.
        try expectServes(store, fixture.values, except: [record.key])
        let report = try store.verify()
        #expect(report.damage.contains { $0.covers(segment, record.offset) })
        #expect(report.damage.allSatisfy { $0.file == segment })
        // A compaction either refuses with corrupt, or leaves the damaged record out; either
        // way the rest is served, and count, keys and contains agree about the damaged key.
        do {
          try store.compact()
        } catch let error as CaskError {
          guard case .corrupt = error else { throw error }
        }
        try expectServes(store, fixture.values, except: [record.key])
        try Self.expectConsistent(store, about: record.key)
        let keys = try store.keys()
        try store.close()
        let reopened = try fixture.open(path)
        #expect(try reopened.keys() == keys, "a reopen after compaction changed the keys")
        try expectServes(reopened, fixture.values, except: [record.key])
        try Self.expectConsistent(reopened, about: record.key)
        try reopened.close()
      }
    }
  }

  @Test("without its hint, a flipped record byte drops that record and recovery reports file and offset")
  func flipScanned() throws {
    let fixture = try DamageFixture("sealed-scan", singles: 30)
    defer { fixture.remove() }
    let segment = fixture.segments[0]
    for record in Self.sampledRecords(fixture.records[segment]!) {
      for offset in Self.targets(in: record) {
        let path = try fixture.copy("flip-\(offset)")
        try FileManager.default.removeItem(atPath: "\(path)/\(DamageFixture.hintName(of: segment))")
        try FileDamage.flipByte(at: offset, in: "\(path)/\(segment)")
        for round in 0..<2 {
          // Damage stays reported on every open: no hint is written for a damaged segment.
          let store = try fixture.open(path)
          let recovery = store.stats().recovery
          #expect(recovery.segmentsScanned == 1, "round \(round)")
          #expect(recovery.corruptRegions.contains { $0.covers(segment, record.offset) })
          #expect(recovery.unreadableSegments.isEmpty)
          #expect(try store.get(record.key) == nil)
          #expect(try store.contains(record.key) == false)
          #expect(store.count == fixture.values.count - 1)
          try expectServes(store, fixture.values, except: [record.key])
          let report = try store.verify()
          #expect(report.damage.contains { $0.covers(segment, record.offset) })
          try store.close()
        }
      }
    }
  }

  @Test("a damaged segment header makes the segment unreadable: reported, its keys gone, the rest served")
  func damagedSegmentHeader() throws {
    let fixture = try DamageFixture("sealed-header", singles: 30)
    defer { fixture.remove() }
    let segment = fixture.segments[1]
    let lost = fixture.keys(in: segment)
    // Magic, version, id, order, reserved, CRC.
    for offset in [0, 7, 8, 12, 16, 20, 24, 28, 31] {
      let path = try fixture.copy("flip-\(offset)")
      try FileDamage.flipByte(at: offset, in: "\(path)/\(segment)")
      let store = try fixture.open(path)
      #expect(store.stats().recovery.unreadableSegments == [segment])
      #expect(store.count == fixture.values.count - lost.count)
      for key in lost { #expect(try store.get(key) == nil) }
      try expectServes(store, fixture.values, except: lost)
      let report = try store.verify()
      #expect(report.damage.contains { $0.file == segment }, "verify does not name the unreadable segment")
      // Writing goes on, and a reopen sees the same.
      try store.put(Data("after".utf8), forKey: "after-damage")
      try store.close()
      let reopened = try fixture.open(path)
      #expect(reopened.stats().recovery.unreadableSegments == [segment])
      #expect(try reopened.get("after-damage") == Data("after".utf8))
      try expectServes(reopened, fixture.values, except: lost)
      try reopened.close()
    }
  }
}

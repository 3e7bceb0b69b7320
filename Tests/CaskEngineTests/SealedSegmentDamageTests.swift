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
    // A key without a value is not listed; a damaged one may stay listed (compaction does not
    // drop it unless asked to), as long as reading it reports the damage instead of a value.
    do {
      if try store.get(key) == nil {
        #expect(!keys.contains(key), "a key without a value is still listed", sourceLocation: sourceLocation)
      }
    } catch CaskError.corrupt {
      #expect(keys.contains(key), "a damaged key is reported but not listed", sourceLocation: sourceLocation)
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
        // A compaction refuses with corrupt and changes nothing (it drops a damaged live
        // record only when asked to); the rest is served, and count, keys and contains agree
        // about the damaged key.
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

  @Test("a damaged stretch wider than the scanner's read-ahead, full of decoy headers, is skipped to the next record")
  func wideDamageWithDecoys() throws {
    // Records of ~200 KiB in segments of up to 4 MiB: the first segment holds a dozen or more.
    let fixture = try DamageFixture(
      "sealed-wide", singles: 24, valueLength: 150_000...250_000, segmentSizeLimit: 4 << 20)
    defer { fixture.remove() }
    let segment = fixture.segments[0]
    let records = fixture.records[segment]!
    // From inside the second record to inside the record that starts 1.5 MiB later: more than
    // the scanner's 1 MiB window, so the search crosses at least one window boundary.
    let damageStart = records[1].offset + 9
    let last = try #require(records.firstIndex { $0.offset >= damageStart + (3 << 19) })
    try #require(last + 1 < records.count, "the segment has no record after the damage")
    let damageEnd = records[last].offset + 5
    let damaged = Set(records[1...last].map(\.key))

    var random = SeededRandom.make(test: "wideDamageWithDecoys")
    var noise = random.bytes(damageEnd - damageStart)
    // Decoys: headers that pass every check but the CRC, some claiming more bytes than the file
    // has, some a delete, at offsets that straddle the window's edges too.
    var decoy = 0
    var planted = 0
    while decoy + CaskFormat.recordHeaderLength < damageEnd - damageStart {
      var header = [UInt8](repeating: 0, count: CaskFormat.recordHeaderLength)
      header[4] = planted % 3 == 2 ? CaskFormat.recordTypeDelete : CaskFormat.recordTypePut
      header[5] = CaskFormat.recordFlagBatchStart | CaskFormat.recordFlagBatchEnd
      let keyLength = UInt32.random(in: 1...300, using: &random)
      let valueLength: UInt32 =
        planted % 3 == 2 ? 0 : planted % 3 == 1 ? UInt32.max - 1_000 : UInt32.random(in: 0...4096, using: &random)
      withUnsafeBytes(of: keyLength.littleEndian) { header.replaceSubrange(16..<20, with: $0) }
      withUnsafeBytes(of: valueLength.littleEndian) { header.replaceSubrange(20..<24, with: $0) }
      noise.replaceSubrange(decoy..<decoy + header.count, with: header)
      planted += 1
      decoy += Int.random(in: 1...70_000, using: &random)
    }

    let path = try fixture.copy("wide")
    try FileManager.default.removeItem(atPath: "\(path)/\(DamageFixture.hintName(of: segment))")
    var bytes = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(segment)"))
    bytes.replaceSubrange(damageStart..<damageEnd, with: noise)
    try bytes.write(to: URL(fileURLWithPath: "\(path)/\(segment)"))

    let store = try fixture.open(path)
    let regions = store.stats().recovery.corruptRegions.filter { $0.file == segment }
    // One region: from the first damaged record to the first intact one after the damage.
    #expect(regions.count == 1, "\(planted) decoys; regions \(regions)")
    #expect(regions.first?.offset == UInt64(records[1].offset))
    #expect(regions.first?.length == UInt64(records[last + 1].offset - records[1].offset))
    #expect(store.count == fixture.values.count - damaged.count)
    try expectServes(store, fixture.values, except: damaged)
    let report = try store.verify()
    #expect(report.damage.filter { $0.file == segment }.map(\.offset) == [UInt64(records[1].offset)])
    try store.close()
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

import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Damage that stays in a segment is reported by every open, not by the first only: an open or
/// a close that wrote a hint for a segment whose scan dropped records made later opens read
/// the hint and report a clean recovery (FORMAT.md, section 14, formerly defect 2).
@Suite("Damage that stays in a segment is reported again by every open")
struct RepeatedDamageReportTests {
  /// Flips a byte inside the key message of `record` and recomputes the record's CRC, so that
  /// the scan accepts the record and its key then fails to authenticate.
  private static func spoilKey(of record: RecordSpan, in path: String) throws {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    bytes[record.offset + CaskFormat.recordHeaderLength + 20] ^= 0x40
    RecordEncoder.setChecksum(in: &bytes, recordAt: record.offset, length: record.length)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }

  private static func expectReported(
    _ store: CaskStore, _ segment: String, _ record: RecordSpan, _ round: Int,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let recovery = store.stats().recovery
    #expect(
      recovery.corruptRegions.contains { $0.covers(segment, record.offset) }, "open \(round) reported \(recovery)",
      sourceLocation: sourceLocation)
    #expect(recovery.droppedRecords >= 1, "open \(round)", sourceLocation: sourceLocation)
  }

  @Test("a sealed segment with a record whose key does not authenticate", arguments: [false, true])
  func sealedSegment(writeBetweenOpens: Bool) throws {
    let fixture = try DamageFixture("repeat-sealed", singles: 30)
    defer { fixture.remove() }
    let segment = fixture.segments[0]
    let record = fixture.records[segment]![1]
    let path = try fixture.copy("spoiled")
    try FileManager.default.removeItem(atPath: "\(path)/\(DamageFixture.hintName(of: segment))")
    try Self.spoilKey(of: record, in: "\(path)/\(segment)")
    for round in 1...3 {
      let store = try fixture.open(path)
      Self.expectReported(store, segment, record, round)
      try expectServes(store, fixture.values, except: [record.key])
      if writeBetweenOpens { try store.put(Data("round \(round)".utf8), forKey: "write-\(round)") }
      try store.close()
    }
  }

  @Test("the last segment, appended to after open, with a record whose key does not authenticate")
  func resumedLastSegment() throws {
    let fixture = try DamageFixture("repeat-last", singles: 31)
    defer { fixture.remove() }
    let segment = try #require(fixture.segments.last)
    let record = try #require(fixture.records[segment]?.first)
    let path = try fixture.copy("spoiled")
    try? FileManager.default.removeItem(atPath: "\(path)/\(DamageFixture.hintName(of: segment))")
    try Self.spoilKey(of: record, in: "\(path)/\(segment)")
    for round in 1...3 {
      let store = try fixture.open(path)
      Self.expectReported(store, segment, record, round)
      try expectServes(store, fixture.values, except: [record.key])
      try store.close()
    }
  }
}

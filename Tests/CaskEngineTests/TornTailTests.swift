import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// The last segment after a crash: no hint (the active segment's hint is written only at
/// close), and a tail that may stop anywhere.
@Suite("A torn or damaged tail of the last segment loses whole batches only, and appends resume")
struct TornTailTests {
  /// Small values, so that the last segment holds several batches of several records.
  private static func makeFixture(_ label: String) throws -> DamageFixture {
    // Version 2: the tail is cut after a clean close, which a version 3 manifest reports.
    try DamageFixture(label, singles: 12, batches: [3, 1, 4, 2, 5, 1, 3], valueLength: 10...60, formatVersion: 2)
  }

  /// A copy of the fixture as a crash would leave it: the last segment without its hint.
  private static func crashedCopy(_ fixture: DamageFixture, _ label: String) throws -> String {
    let path = try fixture.copy(label)
    try FileManager.default.removeItem(atPath: "\(path)/\(DamageFixture.hintName(of: fixture.segments.last!))")
    return path
  }

  @Test("cut at every record boundary and inside records: the incomplete batch is dropped whole")
  func truncatedEverywhere() throws {
    let fixture = try Self.makeFixture("torn-tail")
    defer { fixture.remove() }
    let last = fixture.segments.last!
    let records = fixture.records[last]!
    try #require(records.contains { !$0.endsBatch }, "the last segment must hold multi-record batches")
    var cuts = Set(records.map(\.offset) + [records.last!.end])
    for record in records {
      // Inside the record header, just after it, and one byte short of the record's end.
      cuts.formUnion([record.offset + 10, record.offset + CaskFormat.recordHeaderLength, record.end - 1])
    }
    for cut in cuts.sorted() where cut <= records.last!.end {
      let path = try Self.crashedCopy(fixture, "cut-\(cut)")
      try FileDamage.truncate("\(path)/\(last)", to: cut)
      // What a reader of the format expects: everything up to the last batch end before the cut.
      let validEnd = records.filter { $0.endsBatch && $0.end <= cut }.map(\.end).max() ?? records[0].offset
      let lost = Set(records.filter { $0.end > validEnd }.map(\.key))
      let complete = records.filter { $0.offset >= validEnd && $0.end <= cut }

      let store = try fixture.open(path)
      let recovery = store.stats().recovery
      #expect(recovery.truncatedBytes == UInt64(cut - validEnd), "cut at \(cut)")
      #expect(recovery.droppedRecords == complete.count, "cut at \(cut)")
      #expect(recovery.corruptRegions.isEmpty && recovery.unreadableSegments.isEmpty)
      #expect(try FileDamage.size(of: "\(path)/\(last)") == validEnd, "the torn tail was not cut off")
      #expect(store.count == fixture.values.count - lost.count)
      for key in lost { #expect(try store.get(key) == nil, "a record of an incomplete batch was applied") }
      try expectServes(store, fixture.values, except: lost)

      // Appends resume on the record boundary and survive a reopen.
      try store.put(Data("after \(cut)".utf8), forKey: "after-cut")
      try store.batch { batch in
        try batch.put(Data("one".utf8), forKey: "after-batch-1")
        try batch.put(Data("two".utf8), forKey: "after-batch-2")
      }
      try store.close()
      let reopened = try fixture.open(path)
      #expect(reopened.stats().recovery.isClean, "cut at \(cut): \(reopened.stats().recovery)")
      #expect(try reopened.get("after-cut") == Data("after \(cut)".utf8))
      #expect(try reopened.get("after-batch-2") == Data("two".utf8))
      #expect(reopened.count == fixture.values.count - lost.count + 3)
      try expectServes(reopened, fixture.values, except: lost)
      #expect(try reopened.verify().isClean)
      try reopened.close()
    }
  }

  @Test("a last segment cut inside its own header is reported unreadable and a new segment takes the writes")
  func cutInsideSegmentHeader() throws {
    let fixture = try Self.makeFixture("torn-header")
    defer { fixture.remove() }
    let last = fixture.segments.last!
    let lost = fixture.keys(in: last)
    for cut in [0, 1, 16, CaskFormat.segmentHeaderLength - 1] {
      let path = try Self.crashedCopy(fixture, "cut-\(cut)")
      try FileDamage.truncate("\(path)/\(last)", to: cut)
      let store = try fixture.open(path)
      #expect(store.stats().recovery.unreadableSegments == [last])
      #expect(store.count == fixture.values.count - lost.count)
      try expectServes(store, fixture.values, except: lost)
      try store.put(Data("after".utf8), forKey: "after-cut")
      try store.close()
      let reopened = try fixture.open(path)
      #expect(try reopened.get("after-cut") == Data("after".utf8))
      try expectServes(reopened, fixture.values, except: lost)
      try reopened.close()
    }
  }

  @Test("a flipped byte in the last segment costs its record, or its batch if the batch lost its end, and is reported")
  func flippedByte() throws {
    let fixture = try Self.makeFixture("torn-flip")
    defer { fixture.remove() }
    let last = fixture.segments.last!
    let records = fixture.records[last]!
    // The batch of each record: the run of records up to and including the next batch end.
    var batchOf: [String: [RecordSpan]] = [:]
    var current: [RecordSpan] = []
    for record in records {
      current.append(record)
      if record.endsBatch {
        for member in current { batchOf[member.key] = current }
        current = []
      }
    }
    for record in records {
      for offset in [record.offset, record.offset + 16, record.end - 1] {
        let path = try Self.crashedCopy(fixture, "flip-\(offset)")
        try FileDamage.flipByte(at: offset, in: "\(path)/\(last)")
        let batch = batchOf[record.key]!
        // A batch whose commit marker is intact committed: it keeps every intact record. One
        // that lost its marker (or is the torn tail) is dropped whole.
        let lost = record.endsBatch || record.end == records.last!.end ? batch.map(\.key) : [record.key]
        let store = try fixture.open(path)
        let recovery = store.stats().recovery
        if record.end == records.last!.end {
          // Nothing valid follows: the damaged record is a torn tail, cut with its whole batch.
          #expect(recovery.truncatedBytes == UInt64(record.end - batch[0].offset))
          #expect(recovery.droppedRecords == batch.count - 1)
          for member in batch { #expect(try store.get(member.key) == nil) }
          #expect(try FileDamage.size(of: "\(path)/\(last)") == batch[0].offset)
        } else {
          #expect(recovery.corruptRegions.contains { $0.covers(last, record.offset) }, "\(recovery.corruptRegions)")
          #expect(recovery.truncatedBytes == 0)
          for key in lost { #expect(try store.get(key) == nil, "a damaged record or an unfinished batch was applied") }
          let report = try store.verify()
          #expect(report.damage.contains { $0.covers(last, record.offset) }, "\(report.damage)")
        }
        try expectServes(store, fixture.values, except: Set(lost))
        try store.put(Data("after".utf8), forKey: "after-flip")
        try store.close()
        let reopened = try fixture.open(path)
        #expect(try reopened.get("after-flip") == Data("after".utf8))
        try expectServes(reopened, fixture.values, except: Set(lost))
        try reopened.close()
      }
    }
  }
}

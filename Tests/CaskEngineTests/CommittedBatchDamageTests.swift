import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A batch whose commit marker was written, damaged later (a flipped byte, a bad sector of
/// random bytes), keeps every intact record, whether open reads the segment's hint or scans
/// it; the damage is reported. A batch that never finished, or whose damage is a sector of
/// zeros (what a crash leaves where a write was lost), is dropped whole.
@Suite("Damage to a committed batch costs only its damaged records")
struct CommittedBatchDamageTests {
  /// 3 single puts, a batch of 1,000, a batch of 5, in one segment.
  static func fixture(_ label: String) throws -> DamageFixture {
    try DamageFixture(label, singles: 3, batches: [1000, 5], valueLength: 20...60, segmentSizeLimit: 1 << 24)
  }

  static func removeHints(_ path: String) throws {
    for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".hint") {
      try FileManager.default.removeItem(atPath: "\(path)/\(name)")
    }
  }

  @Test("one flipped byte in a batch of 1,000 costs one record, with or without hint files")
  func flippedByteCostsOneRecord() throws {
    let fixture = try Self.fixture("committed-flip")
    defer { fixture.remove() }
    let segment = try #require(fixture.segments.first)
    let records = fixture.records[segment]!
    let damaged = records[3 + 500]
    for withHints in [true, false] {
      let path = try fixture.copy("flip-\(withHints)")
      if !withHints { try Self.removeHints(path) }
      try FileDamage.flipByte(at: damaged.offset + damaged.length / 2, in: "\(path)/\(segment)")
      let store = try fixture.open(path, readOnly: true)
      try expectServes(store, fixture.values, except: [damaged.key])
      #expect(store.count == fixture.values.count - (withHints ? 0 : 1))
      if !withHints {
        let regions = store.stats().recovery.corruptRegions
        #expect(regions.count == 1, "\(regions)")
        #expect(regions.first?.covers(segment, damaged.offset) == true)
        #expect(regions.first?.reason == "damaged record inside a committed batch; its other records were kept")
        #expect(store.stats().recovery.droppedRecords == 0)
      }
      let report = try store.verify()
      #expect(report.damage.contains { $0.covers(segment, damaged.offset) }, "\(report.damage)")
      try store.close()
    }
  }

  @Test("a batch whose last record (its commit marker) is damaged is dropped in the last segment")
  func lostMarkerDropsBatch() throws {
    let fixture = try Self.fixture("committed-marker")
    defer { fixture.remove() }
    let segment = try #require(fixture.segments.first)
    let records = fixture.records[segment]!
    let marker = records[3 + 999]
    #expect(marker.endsBatch)
    let path = try fixture.copy("marker")
    try Self.removeHints(path)
    try FileDamage.flipByte(at: marker.offset + 30, in: "\(path)/\(segment)")
    let store = try fixture.open(path, readOnly: true)
    let batch = Set(records[3..<1003].map(\.key))
    try expectServes(store, fixture.values, except: batch)
    for key in batch { #expect(try store.get(key) == nil) }
    #expect(store.stats().recovery.droppedRecords == 999)
    try store.close()
  }

  @Test("a sector of zeros inside a batch (a lost write) drops the batch, with its marker intact")
  func zeroSectorDropsBatch() throws {
    let fixture = try Self.fixture("committed-zeros")
    defer { fixture.remove() }
    let segment = try #require(fixture.segments.first)
    let records = fixture.records[segment]!
    let middle = records[3 + 500]
    let path = try fixture.copy("zeros")
    try Self.removeHints(path)
    let sector = (middle.offset / 512 + 1) * 512
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(path)/\(segment)"))
    try handle.seek(toOffset: UInt64(sector))
    try handle.write(contentsOf: Data(count: 512))
    try handle.close()
    let store = try fixture.open(path, readOnly: true)
    let batch = Set(records[3..<1003].map(\.key))
    try expectServes(store, fixture.values, except: batch)
    for key in batch { #expect(try store.get(key) == nil) }
    #expect(store.stats().recovery.droppedRecords > 990)
    try store.close()
  }

  @Test("in a sealed segment, a batch whose commit marker is damaged keeps its intact records")
  func lostMarkerInSealedSegment() throws {
    // A size limit far below the batch's: the batch of 1,000 gets a segment of its own, which
    // the batch of 5 after it seals.
    let fixture = try DamageFixture(
      "committed-sealed", singles: 3, batches: [1000, 5], valueLength: 20...60, segmentSizeLimit: 4096)
    defer { fixture.remove() }
    let segment = try #require(fixture.segments.first { fixture.records[$0]!.count == 1000 })
    #expect(segment != fixture.segments.last)
    let records = fixture.records[segment]!
    let marker = records[999]
    let path = try fixture.copy("sealed")
    try Self.removeHints(path)
    try FileDamage.flipByte(at: marker.offset + 30, in: "\(path)/\(segment)")
    let store = try fixture.open(path, readOnly: true)
    try expectServes(store, fixture.values, except: [marker.key])
    #expect(try store.get(marker.key) == nil)
    let regions = store.stats().recovery.corruptRegions
    #expect(regions.contains { $0.covers(segment, marker.offset) }, "\(regions)")
    #expect(store.stats().recovery.droppedRecords == 0)
    try store.close()
  }
}

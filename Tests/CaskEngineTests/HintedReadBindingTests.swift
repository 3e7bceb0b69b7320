import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// A segment indexed from its genuine hint is never scanned at open, so a read is the only
/// place a record put in place of the current one can be caught: an older record of the same
/// key and length, or only another value message of that key with the CRC fixed. Both must be
/// reported as corrupt by a get, a scan and compaction, never served or dropped in silence.
@Suite struct HintedReadBindingTests {
  /// A closed store (its one segment has its hint) holding `key` written twice with values of
  /// one length, then `other`: the older record, the current one, and one more after them.
  struct Planted {
    var path: String
    var segment: String
    /// Offsets of the older and the current record of `key`, and their common length.
    var older: Int
    var current: Int
    var length: Int
    static let key = "users\u{0}account"
    static let other = "users\u{0}other"
    static let olderValue = Data(repeating: 0x41, count: 300)
    static let currentValue = Data(repeating: 0x42, count: 300)
  }

  private func plant(in directory: TemporaryDirectory) throws -> Planted {
    let path = directory.file("store.cask")
    let store = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
    try store.put(Planted.olderValue, forKey: Planted.key)
    try store.put(Planted.currentValue, forKey: Planted.key)
    try store.put(Data("bystander".utf8), forKey: Planted.other)
    try store.close()
    let names = try FileManager.default.contentsOfDirectory(atPath: path)
    let segment = try #require(names.filter { $0.hasSuffix(".\(CaskFormat.segmentExtension)") }.sorted().last)
    #expect(names.contains(Segment.hintName(id: try #require(Segment.id(fromFileName: segment, extension: "seg")))))
    let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(segment)"))
    let older = FileDamage.recordsStart(ofSegment: [UInt8](bytes))
    let header = try #require(bytes[older...].withUnsafeBytes { RecordHeader.parse($0) })
    return Planted(
      path: path, segment: segment, older: older, current: older + header.totalLength, length: header.totalLength)
  }

  /// Replaces bytes of the segment file in place (same length, so the hint still names it).
  private func rewrite(_ planted: Planted, _ change: (inout [UInt8]) -> Void) throws {
    let file = "\(planted.path)/\(planted.segment)"
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
    change(&bytes)
    try Data(bytes).write(to: URL(fileURLWithPath: file))
  }

  /// Opens the planted store and checks that it was indexed from the hint (nothing scanned).
  private func openFromHint(_ planted: Planted) throws -> CaskStore {
    let store = try CaskStore(path: planted.path, password: testPassword, options: testStoreOptions)
    #expect(store.stats().recovery.segmentsFromHints == 1)
    #expect(store.stats().recovery.segmentsScanned == 0)
    return store
  }

  private func expectCorrupt(_ body: () throws -> Void) {
    #expect {
      try body()
    } throws: { error in
      guard case CaskError.corrupt = error else { return false }
      return true
    }
  }

  /// Checks what every read path and compaction do with the planted record.
  private func expectRefused(_ planted: Planted) throws {
    let store = try openFromHint(planted)
    defer { try? store.close() }
    expectCorrupt { _ = try store.get(Planted.key) }
    #expect(try store.get(Planted.other) == Data("bystander".utf8))
    var served: [String: Data] = [:]
    var damaged: [String] = []
    // A scan of the group reads both records with one read (the window path), not a get each.
    try store.forEachEntry(
      inGroup: "users", onDamage: { key, _ in damaged.append(key) }, { key, value in served[key] = value })
    #expect(served[Planted.key] == nil)
    #expect(served[Planted.other] == Data("bystander".utf8))
    #expect(damaged == [Planted.key])
    let before = try Data(contentsOf: URL(fileURLWithPath: "\(planted.path)/\(planted.segment)"))
    expectCorrupt { try store.compact() }
    // Nothing changed: the segment is still there as it was, and the key still reports damage.
    #expect(try Data(contentsOf: URL(fileURLWithPath: "\(planted.path)/\(planted.segment)")) == before)
    expectCorrupt { _ = try store.get(Planted.key) }
    #expect(try store.verify().isClean == false)
    // Salvaging drops the key, and says so.
    let report = try #require(try store.compact(droppingDamagedRecords: true))
    #expect(report.damagedRecords.count == 1)
    #expect(report.damagedRecords.first?.offset == UInt64(planted.current))
    #expect(try store.get(Planted.key) == nil)
    #expect(try store.get(Planted.other) == Data("bystander".utf8))
  }

  @Test func olderRecordInPlaceOfTheCurrentOneIsNotServed() throws {
    try withTemporaryDirectory("hinted-older") { directory in
      let planted = try plant(in: directory)
      try rewrite(planted) { bytes in
        let older = Array(bytes[planted.older..<(planted.older + planted.length)])
        bytes.replaceSubrange(planted.current..<(planted.current + planted.length), with: older)
      }
      try expectRefused(planted)
    }
  }

  @Test func olderValueMessageWithItsChecksumFixedIsNotServed() throws {
    try withTemporaryDirectory("hinted-value") { directory in
      let planted = try plant(in: directory)
      try rewrite(planted) { bytes in
        let header = bytes.withUnsafeBytes {
          RecordHeader.parse(UnsafeRawBufferPointer(rebasing: $0[planted.current...]))!
        }
        let valueStart = CaskFormat.recordHeaderLength + Int(header.keyLength)
        let olderValue = Array(bytes[(planted.older + valueStart)..<(planted.older + planted.length)])
        bytes.replaceSubrange((planted.current + valueStart)..<(planted.current + planted.length), with: olderValue)
        RecordEncoder.setChecksum(in: &bytes, recordAt: planted.current, length: planted.length)
      }
      try expectRefused(planted)
    }
  }

  /// The unchanged store reads as written through its hint: the check refuses only what was
  /// planted.
  @Test func genuineRecordsReadThroughTheirHint() throws {
    try withTemporaryDirectory("hinted-genuine") { directory in
      let planted = try plant(in: directory)
      let store = try openFromHint(planted)
      defer { try? store.close() }
      #expect(try store.get(Planted.key) == Planted.currentValue)
      #expect(try store.compact()?.damagedRecords.isEmpty == true)
      #expect(try store.get(Planted.key) == Planted.currentValue)
    }
  }
}

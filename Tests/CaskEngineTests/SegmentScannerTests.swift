import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

@Suite("A segment scan finds every intact record around damage, wherever its read-ahead ends")
struct SegmentScannerTests {
  /// A segment of intact one-record batches and damaged stretches (never two stretches in a
  /// row), and where each lies.
  private struct Layout {
    var bytes = FuzzingEntry.segmentHeader(id: 1, base: 1, sub: 0)
    var records: [UInt64] = []
    var damage: [CorruptSpan] = []
  }

  private struct CorruptSpan: Equatable {
    var offset: UInt64
    var length: UInt64
  }

  private static func layout(_ random: inout SeededRandom) -> Layout {
    var layout = Layout()
    var sequence: UInt64 = 0
    var lastWasDamage = false
    for _ in 0..<Int.random(in: 1...40, using: &random) {
      if !lastWasDamage && Int.random(in: 0..<3, using: &random) == 0 {
        let start = layout.bytes.count
        layout.bytes += damagedStretch(&random)
        layout.damage.append(CorruptSpan(offset: UInt64(start), length: UInt64(layout.bytes.count - start)))
        lastWasDamage = true
      } else {
        sequence += 1
        let delete = Int.random(in: 0..<4, using: &random) == 0
        layout.records.append(UInt64(layout.bytes.count))
        FuzzingEntry.appendRecord(
          to: &layout.bytes, delete: delete,
          flags: CaskFormat.recordFlagBatchStart | CaskFormat.recordFlagBatchEnd, sequence: sequence,
          keyMessage: random.bytes(Int.random(in: 1...80, using: &random)),
          valueMessage: delete ? nil : random.bytes(Int.random(in: 0...300, using: &random)))
        lastWasDamage = false
      }
    }
    return layout
  }

  /// Random bytes with decoys: headers that pass every check but the CRC, some claiming more
  /// bytes than the file holds.
  private static func damagedStretch(_ random: inout SeededRandom) -> [UInt8] {
    var bytes = [UInt8](random.bytes(Int.random(in: 1...500, using: &random)))
    let length = CaskFormat.recordHeaderLength
    for _ in 0..<Int.random(in: 0...4, using: &random) where bytes.count > length {
      let at = Int.random(in: 0...(bytes.count - length), using: &random)
      var header = [UInt8](repeating: 0, count: length)
      header[4] = CaskFormat.recordTypePut
      header[5] = CaskFormat.recordFlagBatchStart | CaskFormat.recordFlagBatchEnd
      let keyLength = UInt32.random(in: 1...60, using: &random)
      let valueLength = Bool.random(using: &random) ? UInt32.random(in: 0...200, using: &random) : UInt32.max / 2
      withUnsafeBytes(of: keyLength.littleEndian) { header.replaceSubrange(16..<20, with: $0) }
      withUnsafeBytes(of: valueLength.littleEndian) { header.replaceSubrange(20..<24, with: $0) }
      bytes.replaceSubrange(at..<at + length, with: header)
    }
    return bytes
  }

  @Test("intact records, damaged stretches and a damaged tail are told apart at every read-ahead size")
  func damageBetweenRecords() throws {
    var random = SeededRandom.make(test: "SegmentScannerTests.damageBetweenRecords")
    let fileSystem = FaultyFileSystem(directories: ["/scan"])
    for round in 0..<testIterations(300) {
      let layout = Self.layout(&random)
      let file = try fileSystem.open("/scan/\(round).seg", mode: .createNew)
      defer { file.close() }
      try file.write(Data(layout.bytes), at: 0)
      // The header alone, a few records, larger than most records, and the default.
      let readAhead = [
        24, Int.random(in: 25...120, using: &random), Int.random(in: 121...900, using: &random), 1 << 20,
      ]
      for size in readAhead {
        var scanner = SegmentScanner(file: file, length: UInt64(layout.bytes.count), readAhead: size)
        var found: [UInt64] = []
        let outcome = try scanner.scan { batch in found += batch.map(\.offset) }
        let context = "round \(round), read-ahead \(size)"
        #expect(found == layout.records, "\(context)")
        // A damaged stretch at the very end has nothing valid after it: a torn tail, not a region.
        let tail = layout.damage.last.flatMap { $0.offset + $0.length == UInt64(layout.bytes.count) ? $0 : nil }
        let regions = outcome.corruptions.map { CorruptSpan(offset: $0.offset, length: $0.length) }
        #expect(regions == layout.damage.filter { $0 != tail }, "\(context)")
        #expect(outcome.tailBytes == tail?.length ?? 0, "\(context)")
        #expect(outcome.validEnd == UInt64(layout.bytes.count) - (tail?.length ?? 0), "\(context)")
        #expect(outcome.droppedRecords == 0, "\(context)")
      }
    }
  }
}

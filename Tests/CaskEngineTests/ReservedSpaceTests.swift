import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// The writer writes zeros ahead of itself so that appends and syncs do not grow the file
/// (Docs/FORMAT.md, section 5, "Reserved space"). Only the last segment may end in them, only
/// after a crash; they are never reported as damage and never taken for records.
@Suite("Zeros reserved ahead of the writer")
struct ReservedSpaceTests {
  /// The active segment's path, its last record's end and how far the file was reserved.
  private static func active(_ store: CaskStore) throws -> (path: String, end: UInt64, reserved: UInt64) {
    let active = try #require(store.writer.withLock { $0.active })
    return (active.segment.path, active.end, active.reserved)
  }

  /// Every file of `source` copied to a new directory while the store is open: what a crash
  /// of the process at this moment leaves on disk.
  private static func crashImage(of source: String, in directory: TemporaryDirectory, _ label: String) throws -> String
  {
    let target = directory.file(label)
    try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
    for name in try FileManager.default.contentsOfDirectory(atPath: source) {
      try FileManager.default.copyItem(atPath: "\(source)/\(name)", toPath: "\(target)/\(name)")
    }
    return target
  }

  private static func values(_ count: Int, seed: UInt64) -> [String: Data] {
    var random = SeededRandom(seed: seed)
    var values: [String: Data] = [:]
    for index in 0..<count {
      values["key-\(index)"] = Data(
        (0..<Int.random(in: 1...3000, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
    }
    return values
  }

  @Test("a crash image with reserved zeros opens clean, serves every write, and the zeros are cut (or kept read-only)")
  func crashImageOpensClean() throws {
    try withTemporaryDirectory("reserved") { directory throws in
      let path = directory.file("s.cask")
      let store = try CaskStore(path: path, password: "pw", options: CaskStore.Options(durability: .always))
      let values = Self.values(120, seed: 7)
      for (key, value) in values.sorted(by: { $0.key < $1.key }).prefix(100) { try store.put(value, forKey: key) }
      try store.batch { batch in
        for (key, value) in values.sorted(by: { $0.key < $1.key }).dropFirst(100) { try batch.put(value, forKey: key) }
      }
      let (segmentPath, end, reserved) = try Self.active(store)
      let name = String(segmentPath.split(separator: "/").last!)
      #expect(reserved > end, "nothing reserved")
      #expect(reserved <= end + CaskStore.reserveChunk)
      #expect(try FileDamage.size(of: segmentPath) == Int(reserved))
      let tail = try Data(contentsOf: URL(fileURLWithPath: segmentPath)).suffix(from: Int(end))
      #expect(tail.allSatisfy { $0 == 0 }, "the reserved space must hold zeros only")

      // Read-only: the zeros stay, nothing is reported, everything is served.
      let readOnlyImage = try Self.crashImage(of: path, in: directory, "read-only")
      let readOnly = try CaskStore(path: readOnlyImage, password: "pw", options: CaskStore.Options(readOnly: true))
      #expect(readOnly.stats().recovery.isClean, "\(readOnly.stats().recovery)")
      #expect(readOnly.stats().recovery.zeroTailBytes == reserved - end)
      #expect(try readOnly.verify().isClean)
      for (key, value) in values { #expect(try readOnly.get(key) == value) }
      #expect(try FileDamage.size(of: "\(readOnlyImage)/\(name)") == Int(reserved))
      try readOnly.close()

      // Writable: the zeros are cut, nothing is reported, appends resume at the last record.
      let image = try Self.crashImage(of: path, in: directory, "writable")
      let reopened = try CaskStore(path: image, password: "pw")
      #expect(reopened.stats().recovery.isClean, "\(reopened.stats().recovery)")
      #expect(reopened.stats().recovery.zeroTailBytes == reserved - end)
      #expect(reopened.count == values.count)
      for (key, value) in values { #expect(try reopened.get(key) == value) }
      #expect(try FileDamage.size(of: "\(image)/\(name)") == Int(end))
      #expect(try Self.active(reopened).end == end)
      try reopened.put(Data("after".utf8), forKey: "after")
      try reopened.close()
      let again = try CaskStore(path: image, password: "pw")
      #expect(again.stats().recovery.isClean)
      #expect(again.stats().recovery.zeroTailBytes == 0, "close() left reserved zeros")
      #expect(try again.get("after") == Data("after".utf8))
      #expect(try again.verify().isClean)
      try again.close()

      // A clean close cuts them too, before the hint records the segment's length.
      try store.close()
      #expect(try FileDamage.size(of: segmentPath) == Int(end))
      let closed = try CaskStore(path: path, password: "pw")
      #expect(closed.stats().recovery.segmentsFromHints == 1)
      #expect(closed.stats().recovery.isClean)
      try closed.close()
    }
  }

  @Test("a record that reached the reserved space only in part is a torn tail: cut, reported, earlier writes kept")
  func partialWriteIntoReservedSpaceIsTorn() throws {
    try withTemporaryDirectory("reserved-torn") { directory throws in
      let path = directory.file("s.cask")
      // Version 2: the crash image is made from the closed store, which a version 3 manifest
      // would then report as grown.
      let store = try CaskStore(
        path: path, password: "pw", options: CaskStore.Options(durability: .always).creatingVersion2)
      let values = Self.values(20, seed: 11)
      for (key, value) in values { try store.put(value, forKey: key) }
      let (segmentPath, end, reserved) = try Self.active(store)
      let name = String(segmentPath.split(separator: "/").last!)
      // The next record, of which only a later sector reached the disk.
      try store.put(Data(repeating: 0xAB, count: 6000), forKey: "unacknowledged")
      let next = try Data(contentsOf: URL(fileURLWithPath: segmentPath))[Int(end)..<Int(reserved)]
      try store.close()

      // One byte of the record's body that is not zero.
      let single = try #require((30..<next.count).first { next[next.startIndex + $0] != 0 })
      for (label, survivingRange) in [
        ("later sector", 4096..<5000), ("first bytes", 0..<10), ("one byte", single..<single + 1),
      ] {
        let image = directory.file("image-\(label)")
        try FileManager.default.createDirectory(atPath: image, withIntermediateDirectories: false)
        for file in try FileManager.default.contentsOfDirectory(atPath: path) where !file.hasSuffix(".hint") {
          try FileManager.default.copyItem(atPath: "\(path)/\(file)", toPath: "\(image)/\(file)")
        }
        // The segment as it was before the record: its records, then zeros up to `reserved`,
        // with the surviving part of the record written over them.
        var segment = try Data(contentsOf: URL(fileURLWithPath: "\(image)/\(name)")).prefix(Int(end))
        var zeros = Data(count: Int(reserved - end))
        let surviving = next.startIndex + survivingRange.lowerBound..<next.startIndex + survivingRange.upperBound
        zeros.replaceSubrange(survivingRange, with: next[surviving])
        #expect(zeros.contains { $0 != 0 }, "\(label): the surviving part must not be all zero")
        segment.append(zeros)
        try segment.write(to: URL(fileURLWithPath: "\(image)/\(name)"))

        let reopened = try CaskStore(path: image, password: "pw")
        let recovery = reopened.stats().recovery
        #expect(recovery.truncatedBytes == reserved - end, "\(label): \(recovery)")
        #expect(recovery.corruptRegions.isEmpty, "\(label): \(recovery)")
        #expect(try reopened.get("unacknowledged") == nil)
        for (key, value) in values { #expect(try reopened.get(key) == value, "\(label)") }
        #expect(try FileDamage.size(of: "\(image)/\(name)") == Int(end))
        try reopened.close()
      }
    }
  }

  @Test("zeros at the end of a sealed segment are damage, not reserved space")
  func zerosInSealedSegmentAreDamage() throws {
    // Version 2: zeros are appended to a closed store, which a version 3 manifest reports.
    var options = CaskStore.Options(durability: .always).creatingVersion2
    options.segmentSizeLimit = 16 * 1024
    try withStore(options: options, label: "reserved-sealed") { store, path throws in
      let values = Self.values(40, seed: 13)
      for (key, value) in values.sorted(by: { $0.key < $1.key }) {
        try store.put(value, forKey: key)
        // Never reserved past the segment limit (a record larger than the room left gets a
        // segment of its own, which may be longer).
        let (segmentPath, end, _) = try Self.active(store)
        #expect(try UInt64(FileDamage.size(of: segmentPath)) <= max(options.segmentSizeLimit, end))
      }
      try store.close()
      let segments = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
      try #require(segments.count >= 3)
      let sealed = segments[0]
      let sealedSize = try FileDamage.size(of: "\(path)/\(sealed)")
      try FileManager.default.removeItem(atPath: "\(path)/\(sealed.dropLast(4)).hint")
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(path)/\(sealed)"))
      try handle.seekToEnd()
      try handle.write(contentsOf: Data(count: 4096))
      try handle.close()

      let reopened = try CaskStore(path: path, password: "pw", options: options)
      let recovery = reopened.stats().recovery
      #expect(recovery.truncatedBytes == 0)
      #expect(
        recovery.corruptRegions == [
          CorruptRegion(
            file: sealed, offset: UInt64(sealedSize), length: 4096, reason: "damaged tail of a sealed segment")
        ])
      for (key, value) in values { #expect(try reopened.get(key) == value) }
      try reopened.close()
    }
  }

  @Test("zeros written in part on a full disk are cut at close, also under a record that fitted in them")
  func partialReservationOnFullDisk() throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let options = FaultWorkload.options(fileSystem, segmentSizeLimit: 4 << 20)
    var store = try FaultWorkload.open(options)
    try store.put(Data(repeating: 1, count: 100), forKey: "first")
    try store.close()
    store = try FaultWorkload.open(options)
    // Room for a few kilobytes: the megabyte of zeros is written in part, and the next record
    // fits inside that part.
    fileSystem.setFreeBytes(4000)
    try store.put(Data(repeating: 2, count: 500), forKey: "second")
    let (segmentPath, end, reserved) = try Self.active(store)
    #expect(reserved >= end + CaskStore.reserveChunk)
    let written = try fileSystem.open(segmentPath, mode: .readOnly)
    #expect(try written.size() > end, "the zeros were not written in part")
    written.close()
    fileSystem.setFreeBytes(nil)
    try store.close()

    let reopened = try FaultWorkload.open(options)
    #expect(reopened.stats().recovery.isClean, "\(reopened.stats().recovery)")
    #expect(reopened.stats().recovery.segmentsFromHints == 1)
    let report = try reopened.verify()
    #expect(report.isClean, "\(report.damage)")
    #expect(try reopened.get("second") == Data(repeating: 2, count: 500))
    try reopened.close()
  }

  @Test("under .never and .periodic the writer reserves a smaller chunk, and close cuts it")
  func unsyncedDurabilitiesReserveSmallerChunks() throws {
    try withTemporaryDirectory("reserved-never") { directory throws in
      for (label, durability) in [("never", CaskStore.Durability.never), ("periodic", .periodic(seconds: 60))] {
        let path = directory.file("\(label).cask")
        let store = try CaskStore(path: path, password: "pw", options: CaskStore.Options(durability: durability))
        for index in 0..<30 { try store.put(Data(repeating: 7, count: 900), forKey: "k\(index)") }
        let (segmentPath, end, reserved) = try Self.active(store)
        #expect(reserved > end, "\(label): nothing reserved")
        #expect(reserved <= end + CaskStore.unsyncedReserveChunk, "\(label)")
        #expect(try FileDamage.size(of: segmentPath) == Int(reserved), "\(label)")
        let crash = try Self.crashImage(of: path, in: directory, "\(label)-crash")
        try store.close()
        #expect(try FileDamage.size(of: segmentPath) == Int(end), "\(label): close left the zeros")

        // What a crash leaves opens clean with every write.
        let reopened = try CaskStore(path: crash, password: "pw")
        #expect(reopened.stats().recovery.isClean, "\(label): \(reopened.stats().recovery)")
        #expect(reopened.stats().recovery.zeroTailBytes == reserved - end, "\(label)")
        for index in 0..<30 { #expect(try reopened.get("k\(index)") == Data(repeating: 7, count: 900)) }
        try reopened.close()
      }
    }
  }
}

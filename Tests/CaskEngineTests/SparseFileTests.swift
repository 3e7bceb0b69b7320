import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// Files planted or stretched by someone who holds a store's files: a sparse file claims a
/// length that costs nothing on disk. No length read from a file, nor the length of a file,
/// may size an allocation or a loop before it is checked against the bytes really stored:
/// each case gets a clear error or is passed over with a report, in seconds, never a crash.
@Suite struct SparseFileTests {
  /// How long any of these may take: the planted lengths would cost minutes (and gigabytes)
  /// if they were trusted.
  static let patience: Duration = .seconds(10)

  /// A closed store with a few keys in two segments (each with its hint).
  private func makeStore(in directory: TemporaryDirectory, version: UInt16 = CaskFormat.formatVersion) throws -> String
  {
    let path = directory.file("store.cask")
    var options = testStoreOptions
    options.segmentSizeLimit = 4096
    options.newStoreFormatVersion = version
    let store = try CaskStore(path: path, password: testPassword, options: options)
    for index in 0..<20 { try store.put(Data(repeating: UInt8(index), count: 300), forKey: "key-\(index)") }
    try store.close()
    return path
  }

  /// Makes `file` `length` bytes long, the bytes added a hole.
  private func stretch(_ file: String, to length: UInt64) throws {
    guard truncate(file, off_t(length)) == 0 else {
      throw CaskError.io(operation: "truncate", path: file, errno: errno)
    }
  }

  private func segments(of path: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
  }

  private func timed<R>(_ body: () throws -> R) rethrows -> R {
    let clock = ContinuousClock()
    let start = clock.now
    let result = try body()
    #expect(clock.now - start < Self.patience)
    return result
  }

  private func expectCorrupt(mentioning text: String, _ body: () throws -> Void) {
    #expect {
      try timed(body)
    } throws: { error in
      guard case CaskError.corrupt(_, _, let reason) = error else { return false }
      return reason.contains(text)
    }
  }

  @Test func headerWithSparseTailIsRefusedBeforeItIsRead() throws {
    try withTemporaryDirectory("sparse-header") { directory in
      let path = try makeStore(in: directory)
      try stretch("\(path)/\(CaskFormat.headerFileName)", to: 200 << 30)
      expectCorrupt(mentioning: "longer than the store writes") {
        _ = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      }
    }
  }

  @Test func manifestWithSparseTailIsRefusedBeforeItIsRead() throws {
    try withTemporaryDirectory("sparse-manifest") { directory in
      let path = try makeStore(in: directory)
      try stretch("\(path)/\(CaskFormat.manifestFileName)", to: 200 << 30)
      expectCorrupt(mentioning: "longer than the store writes") {
        _ = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      }
      // A hole inside the limit is refused too: the store writes its files whole.
      let manifest = "\(path)/\(CaskFormat.manifestFileName)"
      let length = try FileDamage.size(of: manifest)
      try stretch(manifest, to: UInt64(length))
      try stretch(manifest, to: 1 << 20)
      expectCorrupt(mentioning: "hole") {
        _ = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      }
    }
  }

  @Test func sparseHintIsPassedOverAndReported() throws {
    try withTemporaryDirectory("sparse-hint") { directory in
      let path = try makeStore(in: directory)
      let first = try #require(try segments(of: path).first)
      let id = try #require(Segment.id(fromFileName: first, extension: CaskFormat.segmentExtension))
      try stretch("\(path)/\(Segment.hintName(id: id))", to: 12 << 30)
      let store = try timed { try CaskStore(path: path, password: testPassword, options: testStoreOptions) }
      defer { try? store.close() }
      // Scanned instead; every key is there.
      #expect(store.stats().recovery.segmentsScanned >= 1)
      #expect(try timed { try store.get("key-0") } == Data(repeating: 0, count: 300))
      #expect(store.count == 20)
    }
  }

  @Test func sparseHintIsReportedByVerify() throws {
    try withTemporaryDirectory("sparse-hint-verify") { directory in
      let path = try makeStore(in: directory)
      let first = try #require(try segments(of: path).first)
      let id = try #require(Segment.id(fromFileName: first, extension: CaskFormat.segmentExtension))
      var readOnly = testStoreOptions
      readOnly.readOnly = true
      let hint = "\(path)/\(Segment.hintName(id: id))"
      let length = try FileDamage.size(of: hint)
      try stretch(hint, to: UInt64(length) + (1 << 20))
      let store = try CaskStore(path: path, password: testPassword, options: readOnly)
      defer { try? store.close() }
      let report = try timed { try store.verify() }
      #expect(report.damage.contains { $0.file == Segment.hintName(id: id) })
    }
  }

  /// The last segment stretched to 4 GiB: a clean close lists it as active, so the hole
  /// reads as the zeros a writer reserves ahead, found without reading them, by a read-only
  /// open and `verify`, and cut by a writable open.
  @Test func sparseTailOfTheLastSegmentCostsNoReading() throws {
    try withTemporaryDirectory("sparse-segment") { directory in
      let path = try makeStore(in: directory)
      let last = try #require(try segments(of: path).last)
      let length = try FileDamage.size(of: "\(path)/\(last)")
      try stretch("\(path)/\(last)", to: CaskFormat.maximumSegmentLength)
      var readOnly = testStoreOptions
      readOnly.readOnly = true
      let reader = try timed { try CaskStore(path: path, password: testPassword, options: readOnly) }
      #expect(reader.count == 20)
      #expect(reader.stats().recovery.zeroTailBytes > 0)
      #expect(try timed { try reader.verify() }.recordsChecked == 20)
      try reader.close()
      let writer = try timed { try CaskStore(path: path, password: testPassword, options: testStoreOptions) }
      defer { try? writer.close() }
      #expect(writer.count == 20)
      #expect(try FileDamage.size(of: "\(path)/\(last)") == length)
    }
  }

  /// A sealed segment stretched to 4 GiB: open reports it against the manifest; salvaging
  /// and verifying it skip the hole instead of searching it byte by byte for records.
  @Test func sparseSealedSegmentIsReportedQuickly() throws {
    try withTemporaryDirectory("sparse-sealed") { directory in
      let path = try makeStore(in: directory)
      let names = try segments(of: path)
      try #require(names.count >= 2)
      let first = names[0]
      let id = try #require(Segment.id(fromFileName: first, extension: CaskFormat.segmentExtension))
      try FileManager.default.removeItem(atPath: "\(path)/\(Segment.hintName(id: id))")
      try stretch("\(path)/\(first)", to: CaskFormat.maximumSegmentLength)
      #expect {
        try timed { _ = try CaskStore(path: path, password: testPassword, options: testStoreOptions) }
      } throws: { error in
        guard case CaskError.integrityViolation = error else { return false }
        return true
      }
      var salvage = testStoreOptions
      salvage.readOnly = true
      salvage.allowIntegrityViolations = true
      let store = try timed { try CaskStore(path: path, password: testPassword, options: salvage) }
      defer { try? store.close() }
      #expect(store.count == 20)
      let report = try timed { try store.verify() }
      #expect(report.damage.contains { $0.file == first })
    }
  }

  /// Header-only segments, each with a "hint" whose head is a genuine hint's and whose tail is
  /// a hole: the counts in the head (unauthenticated) size nothing, and each is passed over.
  /// In a version 3 store the planted headers are read (only a CRC vouches for them); in a
  /// version 5 one they do not authenticate, so each is refused before its hint is looked at.
  @Test(arguments: [CaskFormat.boundRecordsVersion, CaskFormat.authenticatedVersion])
  func plantedHeaderOnlySegmentsWithSparseHintsSizeNothing(version: UInt16) throws {
    try withTemporaryDirectory("planted-hints") { directory in
      let path = try makeStore(in: directory, version: version)
      let first = try #require(try segments(of: path).first)
      let firstID = try #require(Segment.id(fromFileName: first, extension: CaskFormat.segmentExtension))
      let genuine = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(Segment.hintName(id: firstID))"))
      // Headers as the store's own (its version and key epoch), so that open reads them.
      let own = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(first)"))
      guard case .success(let decoded) = Segment.decodeHeader(own) else {
        Issue.record("the store's segment header does not decode")
        return
      }
      for planted in UInt32(0x1000)..<UInt32(0x1040) {
        let header = Segment.encodeHeader(
          id: planted, order: SegmentOrder(base: planted, sub: 0), version: decoded.version, epoch: decoded.epoch)
        try Data(header).write(to: URL(fileURLWithPath: "\(path)/\(Segment.fileName(id: planted))"))
        let hint = "\(path)/\(Segment.hintName(id: planted))"
        try genuine.prefix(HintPayload.sizingHeadLength).write(to: URL(fileURLWithPath: hint))
        try stretch(hint, to: 1 << 30)
      }
      var salvage = testStoreOptions
      salvage.readOnly = true
      salvage.allowIntegrityViolations = true
      let store = try timed { try CaskStore(path: path, password: testPassword, options: salvage) }
      defer { try? store.close() }
      #expect(store.count == 20)
      if version == CaskFormat.authenticatedVersion {
        #expect(store.stats().recovery.unreadableSegments.count == 64)
      } else {
        // Each planted segment was read (none had a usable hint): only what the files hold was.
        #expect(store.stats().recovery.segmentsScanned >= 64)
      }
      #expect(try timed { try store.keys() }.count == 20)
    }
  }
}

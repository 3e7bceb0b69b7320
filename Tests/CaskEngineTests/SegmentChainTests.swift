import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

/// Version 5 chains every segment to the one before it (`SegmentLink`): with an older
/// `MANIFEST` put back, every segment started after it is unchecked by the manifest, and the
/// chain is what finds one removed from among them, two of them with their order fields
/// exchanged, or one cut after its successor was started. Each attack is also made on a
/// version 3 store, where it opens and serves a state that never existed: the planted proof
/// that the chain, not something else, refuses it.
@Suite struct SegmentChainTests {
  /// A closed store whose history after an older manifest spans several segments.
  struct History {
    var path: String
    /// The manifest as a clean close left it before the later writes.
    var olderManifest: Data
    /// The segment holding `gone`'s tombstone, with segments before and after it.
    var tombstoneSegment: String
    /// The segments holding the first and the second value of `flip`.
    var firstFlip: String
    var secondFlip: String
  }

  private static func newestSegment(_ path: String) throws -> String {
    try #require(try DamageFixture.segmentNames(in: path).last)
  }

  private static func options(version: UInt16) -> CaskStore.Options {
    var options = testStoreOptions
    options.segmentSizeLimit = 1024
    options.autoCompaction = nil
    options.newStoreFormatVersion = version
    return options
  }

  static func makeHistory(in directory: TemporaryDirectory, version: UInt16) throws -> History {
    let path = directory.file("store.cask")
    let options = options(version: version)
    let filler = Data(repeating: 0x61, count: 300)
    var store = try CaskStore(path: path, password: testPassword, options: options)
    try store.put(Data("here".utf8), forKey: "gone")
    for index in 0..<4 { try store.put(filler, forKey: "early-\(index)") }
    try store.close()
    let olderManifest = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(CaskFormat.manifestFileName)"))
    store = try CaskStore(path: path, password: testPassword, options: options)
    for index in 0..<4 { try store.put(filler, forKey: "fill-\(index)") }
    try store.put(Data("first".utf8), forKey: "flip")
    let firstFlip = try newestSegment(path)
    for index in 4..<8 { try store.put(filler, forKey: "fill-\(index)") }
    try store.delete("gone")
    let tombstoneSegment = try newestSegment(path)
    for index in 0..<4 { try store.put(filler, forKey: "later-\(index)") }
    try store.put(Data("second".utf8), forKey: "flip")
    let secondFlip = try newestSegment(path)
    for index in 4..<8 { try store.put(filler, forKey: "later-\(index)") }
    try store.close()
    return History(
      path: path, olderManifest: olderManifest, tombstoneSegment: tombstoneSegment, firstFlip: firstFlip,
      secondFlip: secondFlip)
  }

  private static func putBackOlderManifest(_ history: History) throws {
    try history.olderManifest.write(to: URL(fileURLWithPath: "\(history.path)/\(CaskFormat.manifestFileName)"))
  }

  private static func remove(_ segment: String, from path: String) throws {
    try FileManager.default.removeItem(atPath: "\(path)/\(segment)")
    try? FileManager.default.removeItem(atPath: "\(path)/\(DamageFixture.hintName(of: segment))")
  }

  /// Exchanges the order fields (base, sub) of two segment files and fixes both CRCs.
  static func exchangeOrders(_ first: String, _ second: String, in path: String) throws {
    var a = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(first)")))
    var b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(second)")))
    let orderA = Array(a[16..<24])
    a.replaceSubrange(16..<24, with: b[16..<24])
    b.replaceSubrange(16..<24, with: orderA)
    for (name, var bytes) in [(first, a), (second, b)] {
      let crc = CRC32C.checksum(bytes[0..<CaskFormat.segmentHeaderChecksummedLength])
      withUnsafeBytes(of: crc.littleEndian) { bytes.replaceSubrange(28..<32, with: $0) }
      try Data(bytes).write(to: URL(fileURLWithPath: "\(path)/\(name)"))
    }
  }

  private static func isChainViolation(_ error: any Error) -> Bool {
    guard case CaskError.integrityViolation(let file, _) = error else { return false }
    return file.hasSuffix(".seg")
  }

  /// What the store serves, opened with the test options of `version`.
  private static func contents(_ path: String, version: UInt16) throws -> [String: Data] {
    let store = try CaskStore(path: path, password: testPassword, options: options(version: version))
    defer { try? store.close() }
    var contents: [String: Data] = [:]
    for key in try store.keys() { contents[key] = try store.get(key) }
    return contents
  }

  /// Refused by open, and, opened for salvage, reported by `verify`.
  private static func expectRefusedAndReported(_ path: String, _ comment: Comment) throws {
    #expect(comment) {
      _ = try CaskStore(path: path, password: testPassword, options: options(version: 5))
    } throws: { isChainViolation($0) }
    var salvage = options(version: 5)
    salvage.readOnly = true
    salvage.allowIntegrityViolations = true
    let store = try CaskStore(path: path, password: testPassword, options: salvage)
    defer { try? store.close() }
    let report = try store.verify()
    #expect(report.damage.contains { $0.file.hasSuffix(".seg") && $0.length == 0 }, comment)
  }

  @Test func anUntouchedHistoryOpensUnderItsOwnManifestAndVerifiesClean() throws {
    try withTemporaryDirectory("chain-clean") { directory in
      let history = try Self.makeHistory(in: directory, version: 5)
      let contents = try Self.contents(history.path, version: 5)
      #expect(contents["gone"] == nil && contents["flip"] == Data("second".utf8) && contents["later-7"] != nil)
      let store = try CaskStore(path: history.path, password: testPassword, options: Self.options(version: 5))
      defer { try? store.close() }
      #expect(try store.verify().isClean)
    }
  }

  /// The older manifest alone is a crash's state: the newer segments chain from it.
  @Test func anOlderManifestAloneOpensToTheSameState() throws {
    try withTemporaryDirectory("chain-older-manifest") { directory in
      let history = try Self.makeHistory(in: directory, version: 5)
      let expected = try Self.contents(history.path, version: 5)
      try Self.putBackOlderManifest(history)
      #expect(try Self.contents(history.path, version: 5) == expected)
    }
  }

  @Test func middleSegmentRemovedUnderAnOlderManifestIsRefused() throws {
    for version in [UInt16(3), 5] {
      try withTemporaryDirectory("chain-removed") { directory in
        let history = try Self.makeHistory(in: directory, version: version)
        try Self.putBackOlderManifest(history)
        try Self.remove(history.tombstoneSegment, from: history.path)
        if version == 5 {
          try Self.expectRefusedAndReported(history.path, "a middle segment removed")
        } else {
          // Without the chain: the deleted key is back beside writes made after its delete.
          let served = try Self.contents(history.path, version: version)
          #expect(served["gone"] == Data("here".utf8) && served["later-7"] != nil)
        }
      }
    }
  }

  @Test func orderFieldsExchangedBetweenLaterSegmentsAreRefused() throws {
    for version in [UInt16(3), 5] {
      try withTemporaryDirectory("chain-swapped") { directory in
        let history = try Self.makeHistory(in: directory, version: version)
        #expect(history.firstFlip != history.secondFlip)
        try Self.putBackOlderManifest(history)
        try Self.exchangeOrders(history.firstFlip, history.secondFlip, in: history.path)
        if version == 5 {
          try Self.expectRefusedAndReported(history.path, "two segments' orders exchanged")
        } else {
          // Without the chain: the older value wins over the newer one.
          #expect(try Self.contents(history.path, version: version)["flip"] == Data("first".utf8))
        }
      }
    }
  }

  @Test func laterSegmentCutAfterItsSuccessorStartedIsRefused() throws {
    try withTemporaryDirectory("chain-cut") { directory in
      let history = try Self.makeHistory(in: directory, version: 5)
      try Self.putBackOlderManifest(history)
      let segment = "\(history.path)/\(history.tombstoneSegment)"
      try FileDamage.truncate(segment, to: Int(Segment.recordsStart(linked: true)))
      try? FileManager.default.removeItem(
        atPath: "\(history.path)/\(DamageFixture.hintName(of: history.tombstoneSegment))")
      try Self.expectRefusedAndReported(history.path, "a sealed segment cut back to its header")
    }
  }
}

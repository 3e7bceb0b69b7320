import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

@Suite("A damaged hint file is never trusted: open scans the segment and loses nothing")
struct HintDamageTests {
  /// Opens the damaged copy read-only (nothing repaired: verify must name the hint), then
  /// writable (the hint is rewritten), then again (every segment from its hint).
  private static func expectFallsBackToScanning(
    _ path: String, hint: String, fixture: DamageFixture, sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let reader = try fixture.open(path, readOnly: true)
    let recovery = reader.stats().recovery
    #expect(recovery.segmentsScanned == 1, sourceLocation: sourceLocation)
    #expect(recovery.segmentsFromHints == fixture.segments.count - 1, sourceLocation: sourceLocation)
    #expect(recovery.isClean, sourceLocation: sourceLocation)
    #expect(reader.count == fixture.values.count, sourceLocation: sourceLocation)
    try expectServes(reader, fixture.values, except: [], sourceLocation: sourceLocation)
    let report = try reader.verify()
    #expect(report.damage.map(\.file) == [hint], "verify: \(report.damage)", sourceLocation: sourceLocation)
    try reader.close()

    let writer = try fixture.open(path)
    #expect(writer.stats().recovery.segmentsScanned == 1, sourceLocation: sourceLocation)
    try expectServes(writer, fixture.values, except: [], sourceLocation: sourceLocation)
    #expect(try writer.verify().isClean, "the hint was not rewritten", sourceLocation: sourceLocation)
    try writer.close()

    let again = try fixture.open(path)
    #expect(again.stats().recovery.segmentsFromHints == fixture.segments.count, sourceLocation: sourceLocation)
    try expectServes(again, fixture.values, except: [], sourceLocation: sourceLocation)
    try again.close()
  }

  @Test("a flipped byte anywhere in a hint file")
  func flippedByte() throws {
    let fixture = try DamageFixture("hint-flip", singles: 30)
    defer { fixture.remove() }
    let hint = DamageFixture.hintName(of: fixture.segments[0])
    let size = try FileDamage.size(of: "\(fixture.pristine)/\(hint)")
    // Magic, the message's version and options bytes, IV, ciphertext, HMAC.
    for offset in [0, 7, 8, 9, 10, 25, 26, size / 2, size - 33, size - 32, size - 1] {
      let path = try fixture.copy("flip-\(offset)")
      try FileDamage.flipByte(at: offset, in: "\(path)/\(hint)")
      try Self.expectFallsBackToScanning(path, hint: hint, fixture: fixture)
    }
  }

  @Test("a hint file cut short")
  func truncated() throws {
    let fixture = try DamageFixture("hint-cut", singles: 30)
    defer { fixture.remove() }
    let hint = DamageFixture.hintName(of: fixture.segments[0])
    let size = try FileDamage.size(of: "\(fixture.pristine)/\(hint)")
    for length in [0, 4, 8, 9, 60, size / 2, size - 16, size - 1] {
      let path = try fixture.copy("cut-\(length)")
      try FileDamage.truncate("\(path)/\(hint)", to: length)
      try Self.expectFallsBackToScanning(path, hint: hint, fixture: fixture)
    }
  }

  @Test("an authentic hint of another segment is not used for this one")
  func hintOfAnotherSegment() throws {
    let fixture = try DamageFixture("hint-swap", singles: 30)
    defer { fixture.remove() }
    let path = try fixture.copy("swapped")
    let hint = DamageFixture.hintName(of: fixture.segments[0])
    try FileManager.default.removeItem(atPath: "\(path)/\(hint)")
    try FileManager.default.copyItem(
      atPath: "\(path)/\(DamageFixture.hintName(of: fixture.segments[1]))", toPath: "\(path)/\(hint)")
    try Self.expectFallsBackToScanning(path, hint: hint, fixture: fixture)
  }

  // MARK: A hint that open passes over

  private static let linkOptions = CaskStore.Options(
    durability: .never, segmentSizeLimit: 4096, autoCompaction: nil)

  /// Puts `count` keys with values of about 300 bytes: several segments at 4 KiB.
  private static func fill(_ store: CaskStore, count: Int) throws {
    for index in 0..<count {
      try store.put(Data("value \(index) \(String(repeating: "v", count: 300))".utf8), forKey: "key-\(index)")
    }
  }

  /// A store of several sealed segments, closed, whose first hint is then a symbolic link to
  /// its own bytes elsewhere: open passes over it (refused with `ELOOP`) and scans.
  private static func storeWithLinkedHint(_ directory: TemporaryDirectory) throws -> String {
    let path = directory.file("s.cask")
    let store = try CaskStore(path: path, password: "pw", options: Self.linkOptions)
    try Self.fill(store, count: 30)
    for index in 0..<30 where index % 2 == 0 { try store.delete("key-\(index)") }
    try store.close()
    let hint = "\(path)/\(Segment.hintName(id: 1))"
    try FileManager.default.moveItem(atPath: hint, toPath: directory.file("moved.hint"))
    try FileManager.default.createSymbolicLink(atPath: hint, withDestinationPath: directory.file("moved.hint"))
    return path
  }

  @Test("verify() reports a hint that open passes over instead of failing on it")
  func verifyReportsLinkedHint() throws {
    try withTemporaryDirectory("linked-hint-verify") { directory throws in
      let path = try Self.storeWithLinkedHint(directory)
      var readOnly = Self.linkOptions
      readOnly.readOnly = true
      let reader = try CaskStore(path: path, password: "pw", options: readOnly)
      defer { try? reader.close() }
      let report = try reader.verify()
      #expect(report.damage.map(\.file) == [Segment.hintName(id: 1)], "\(report.damage)")
      #expect(report.damage.first?.reason.contains("cannot be opened") == true)
    }
  }

  @Test("compact() scans a segment whose hint open would pass over instead of failing on it")
  func compactPassesOverLinkedHint() throws {
    try withTemporaryDirectory("linked-hint-compact") { directory throws in
      let path = directory.file("s.cask")
      let store = try CaskStore(path: path, password: "pw", options: Self.linkOptions)
      defer { try? store.close() }
      try Self.fill(store, count: 30)
      for index in 0..<30 where index % 2 == 0 { try store.delete("key-\(index)") }
      // Made a link while the store is open (a writable open replaces such a hint with its own),
      // once the hint queue has written the sealed segment's hint.
      store.hintQueue.drain()
      let hint = "\(path)/\(Segment.hintName(id: 1))"
      try FileManager.default.moveItem(atPath: hint, toPath: directory.file("moved.hint"))
      try FileManager.default.createSymbolicLink(atPath: hint, withDestinationPath: directory.file("moved.hint"))
      let report = try #require(try store.compact())
      #expect(report.inputSegments > 1)
      for index in 0..<30 {
        let expected = index % 2 == 0 ? nil : Data("value \(index) \(String(repeating: "v", count: 300))".utf8)
        #expect(try store.get("key-\(index)") == expected, "key-\(index)")
      }
    }
  }
}

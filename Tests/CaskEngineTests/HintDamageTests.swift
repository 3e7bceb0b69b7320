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
}

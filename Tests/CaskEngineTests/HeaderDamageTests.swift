import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

@Suite("A damaged CASK header is reported as damage, never as a wrong password")
struct HeaderDamageTests {
  /// Opens `path` writable and read-only; both must fail with the same error, and change nothing.
  private func openFailure(_ path: String) throws -> [CaskError] {
    let before = try DamageFixture.snapshot(path)
    var errors: [CaskError] = []
    for readOnly in [false, true] {
      var options = DamageFixture.options
      options.readOnly = readOnly
      let error = #expect(throws: CaskError.self) {
        try CaskStore(path: path, password: DamageFixture.password, options: options)
      }
      if let error { errors.append(error) }
    }
    #expect(try DamageFixture.snapshot(path) == before, "a failed open changed the store's files")
    return errors
  }

  /// The error expected for damage at `offset` of the header: its magic is what tells a
  /// store from something else; every other byte is covered by the header CRC.
  private func expectHeaderError(_ errors: [CaskError], damageAt offset: Int, header: String) {
    #expect(errors.count == 2)
    for error in errors {
      if offset < CaskFormat.headerMagic.count {
        #expect(error == .notACaskStore(path: header), "damage at \(offset) gave \(error)")
      } else if case .corrupt(let file, _, _) = error {
        #expect(file == header)
      } else {
        Issue.record("damage at header offset \(offset) gave \(error), not .corrupt")
      }
    }
  }

  @Test("a flipped byte anywhere in the header fails open with corrupt (notACaskStore in the magic)")
  func flippedByte() throws {
    let fixture = try DamageFixture("header-flip", singles: 3, withPassword: true)
    defer { fixture.remove() }
    let size = try FileDamage.size(of: "\(fixture.pristine)/\(CaskFormat.headerFileName)")
    // Magic, version, flags, wrapped length, the wrapped key's version/options/salts/IV,
    // its ciphertext and HMAC, and the header CRC.
    let offsets = [
      0, 7, 8, 9, 10, 11, 12, 15, 16, 17, 18, 26, 34, 60, size / 2, size - 6, size - 5, size - 4, size - 1,
    ]
    for offset in offsets {
      for mask: UInt8 in [0x01, 0x80] {
        let path = try fixture.copy("flip-\(offset)-\(mask)")
        let header = "\(path)/\(CaskFormat.headerFileName)"
        try FileDamage.flipByte(at: offset, in: header, mask: mask)
        expectHeaderError(try openFailure(path), damageAt: offset, header: header)
      }
    }
  }

  @Test("a header cut short fails open with corrupt (notACaskStore inside the magic)")
  func truncated() throws {
    let fixture = try DamageFixture("header-cut", singles: 3, withPassword: true)
    defer { fixture.remove() }
    let size = try FileDamage.size(of: "\(fixture.pristine)/\(CaskFormat.headerFileName)")
    for length in [0, 1, 7, 8, 10, 12, 15, 16, 17, 50, size - 5, size - 4, size - 1] {
      let path = try fixture.copy("cut-\(length)")
      let header = "\(path)/\(CaskFormat.headerFileName)"
      try FileDamage.truncate(header, to: length)
      expectHeaderError(try openFailure(path), damageAt: length, header: header)
    }
  }

  @Test("the undamaged header of the same store still opens with every record")
  func controlOpens() throws {
    let fixture = try DamageFixture("header-control", singles: 3, withPassword: true)
    defer { fixture.remove() }
    let store = try fixture.open(fixture.pristine)
    defer { try? store.close() }
    try expectServes(store, fixture.values, except: [])
    #expect(store.stats().recovery.isClean)
  }
}

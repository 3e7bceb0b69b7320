import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// An encrypted export is no cheap test of the store's password: it asks for a password of
/// its own, and reuses the store's only on request, with a warning.
@Suite("cask export: a password of its own")
struct ExportPasswordTests {
  static let password = "export-own-pw"
  static let exportPassword = "a-different-export-pw"

  private func makeStore(_ cask: CaskRunner) throws {
    let store = try CaskStore(path: cask.path("s"), password: Self.password, options: testStoreOptions)
    try store.put(Data("value-one".utf8), forKey: "one")
    try store.close()
  }

  /// The value file of the export in `out` (every file but the listing).
  private func valueFile(_ cask: CaskRunner) throws -> Data {
    let names = try FileManager.default.contentsOfDirectory(atPath: cask.path("out"))
    let name = try #require(names.first { $0 != "listing.rncryptor" && !$0.hasPrefix(".") })
    return try Data(contentsOf: URL(fileURLWithPath: cask.path("out/\(name)")))
  }

  @Test("without an export password and no terminal, export refuses and writes nothing")
  func refusesWithoutItsOwnPassword() throws {
    let cask = try CaskRunner("export-own-none")
    defer { cask.remove() }
    try makeStore(cask)
    let result = try cask.run(["export", "s", "out"], password: Self.password)
    #expect(result.status == 1)
    #expect(
      result.err.hasPrefix("Error: an encrypted export needs its own password")
        && result.err.contains("--reuse-store-password"), "\(result.err)")
    #expect(!result.err.contains(Self.password))
    let written = (try? FileManager.default.contentsOfDirectory(atPath: cask.path("out"))) ?? []
    #expect(written.filter { !$0.hasPrefix(".") }.isEmpty, "\(written)")
  }

  @Test("with an export password the files open with it, not with the store's")
  func filesUseTheExportPassword() throws {
    let cask = try CaskRunner("export-own-given")
    defer { cask.remove() }
    try makeStore(cask)
    let result = try cask.run(
      ["export", "s", "out"], password: Self.password, environment: ["CASK_EXPORT_PASSWORD": Self.exportPassword])
    #expect(result.status == 0, "\(result.err)")
    #expect(result.err.isEmpty, "\(result.err)")
    let file = try valueFile(cask)
    #expect(try RNCryptor.decrypt(file, password: Self.exportPassword) == Data("value-one".utf8))
    #expect(throws: (any Error).self) { try RNCryptor.decrypt(file, password: Self.password) }
  }

  @Test("--reuse-store-password encrypts under the store's password and warns")
  func reuseIsExplicitAndWarns() throws {
    let cask = try CaskRunner("export-own-reuse")
    defer { cask.remove() }
    try makeStore(cask)
    let result = try cask.run(["export", "s", "out", "--reuse-store-password"], password: Self.password)
    #expect(result.status == 0, "\(result.err)")
    #expect(result.err.hasPrefix("warning: the files are encrypted under the store's password"), "\(result.err)")
    #expect(result.out.contains("under the store's password"), "\(result.out)")
    #expect(try RNCryptor.decrypt(try valueFile(cask), password: Self.password) == Data("value-one".utf8))
    let both = try cask.run(
      ["export", "s", "out2", "--reuse-store-password"], password: Self.password,
      environment: ["CASK_EXPORT_PASSWORD": Self.exportPassword])
    #expect(both.status == 64, "\(both.err)")
  }
}

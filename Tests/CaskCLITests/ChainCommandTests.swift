import CaskTestSupport
import CipherCask
import Foundation
import Testing

/// What the built `cask` does with a version 5 store that someone who holds its files changed
/// in ways a version 3 store could not notice: an older manifest put back and a segment
/// removed after it, and the header's version changed back on a new store. Each is a one-line
/// error and exit 1; nothing is served or written.
@Suite("cask with a broken segment chain or a downgraded header")
struct ChainCommandTests {
  static let password = "pw-chain"

  /// A closed store `s` whose writes after an older manifest span several segments, the
  /// delete of `gone` in one of the middle ones; returns that segment's name.
  private func makeHistory(_ cask: CaskRunner) throws -> String {
    let path = cask.path("s")
    var options = testStoreOptions
    options.segmentSizeLimit = 1024
    options.autoCompaction = nil
    // Each filler fills most of a segment, so no session resumes the segment the one before
    // it closed: the older manifest then still describes what it lists.
    let filler = Data(repeating: 0x61, count: 600)
    var store = try CaskStore(path: path, password: Self.password, options: options)
    try store.put(Data("here".utf8), forKey: "gone")
    try store.put(filler, forKey: "early")
    try store.close()
    let manifest = "\(path)/\(CaskFormat.manifestFileName)"
    try FileManager.default.copyItem(atPath: manifest, toPath: cask.path("older-manifest"))
    store = try CaskStore(path: path, password: Self.password, options: options)
    for index in 0..<2 { try store.put(filler, forKey: "fill-\(index)") }
    try store.delete("gone")
    let segments = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
    let tombstone = try #require(segments.last)
    for index in 0..<2 { try store.put(filler, forKey: "later-\(index)") }
    try store.close()
    try FileManager.default.removeItem(atPath: manifest)
    try FileManager.default.copyItem(atPath: cask.path("older-manifest"), toPath: manifest)
    return tombstone
  }

  @Test("an older manifest put back and a middle segment removed: verify and get exit 1 naming it")
  func removedSegmentIsReported() throws {
    let cask = try CaskRunner("chain-removed")
    defer { cask.remove() }
    let tombstone = try makeHistory(cask)
    // The older manifest alone is a state a crash leaves: it opens and verifies.
    #expect(try cask.run(["verify", "s"], password: Self.password).status == 0)
    try FileManager.default.removeItem(atPath: "\(cask.path("s"))/\(tombstone)")
    try? FileManager.default.removeItem(atPath: "\(cask.path("s"))/\(tombstone.dropLast(3))hint")
    let verify = try cask.run(["verify", "s"], password: Self.password)
    #expect(verify.status == 1, "\(verify.err)")
    #expect(verify.err.contains("a segment between them was removed"), "\(verify.err)")
    let get = try cask.run(["get", "s", "gone"], password: Self.password)
    #expect(get.status == 1 && get.out.isEmpty, "\(get.err)")
    #expect(get.err.hasPrefix("Error: ") && get.err.split(separator: "\n").count <= 2, "\(get.err)")
  }

  @Test("a new store's header changed back to version 2: put and upgrade exit 1, nothing is written")
  func downgradedNewStoreIsRefused() throws {
    let cask = try CaskRunner("chain-downgrade")
    defer { cask.remove() }
    let path = try cask.createStore("s", password: Self.password)
    try FileDamage.setHeaderVersion(2, ofStore: path)
    let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    let header = try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(CaskFormat.headerFileName)"))
    for arguments in [["put", "s", "k"], ["upgrade", "s"]] {
      let result = try cask.run(arguments, password: Self.password, stdin: Data("v".utf8))
      #expect(result.status == 1, "\(arguments): \(result.err)")
      #expect(result.err.contains("downgraded header"), "\(arguments): \(result.err)")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before)
    #expect(try Data(contentsOf: URL(fileURLWithPath: "\(path)/\(CaskFormat.headerFileName)")) == header)
    let wrong = try cask.run(["get", "s", "k"], password: "not the password")
    #expect(wrong.status == 1 && wrong.err == "Error: wrong password for store 's'\n", "\(wrong.err)")
  }
}

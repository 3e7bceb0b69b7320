import CaskTestSupport
import CipherCask
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What the built `cask` does with a store whose files someone who holds them has changed:
/// an older record put in place of the current one, a sparse header, a planted last segment
/// number. Each gets a one-line error and a non-zero exit, in seconds; nothing is served or
/// dropped in silence.
@Suite("cask with planted and replaced files")
struct PlantedFileCommandTests {
  static let password = "pw-planted"

  /// A store `s` (closed, its segment with its hint) where `account` was written twice with
  /// values of one length and `other` after them.
  func makeStore(_ cask: CaskRunner) throws -> String {
    let path = cask.path("s")
    let store = try CaskStore(path: path, password: Self.password, options: testStoreOptions)
    try store.put(Data(repeating: 0x41, count: 200), forKey: "account")
    try store.put(Data(repeating: 0x42, count: 200), forKey: "account")
    try store.put(Data("bystander".utf8), forKey: "other")
    try store.close()
    return path
  }

  /// Copies the older record of `account` over the current one (same length), leaving the
  /// segment's hint as it was.
  private func plantOlderRecord(in path: String) throws {
    let name = try #require(try FileManager.default.contentsOfDirectory(atPath: path).first { $0.hasSuffix(".seg") })
    let file = "\(path)/\(name)"
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
    let older = FileDamage.recordsStart(ofSegment: bytes)
    func field(_ at: Int) -> Int {
      Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }
    let length = 24 + field(older + 16) + field(older + 20)
    let current = older + length
    bytes.replaceSubrange(current..<(current + length), with: Array(bytes[older..<(older + length)]))
    try Data(bytes).write(to: URL(fileURLWithPath: file))
  }

  func expectOneLineError(_ result: CaskResult, containing text: String) {
    #expect(result.status == 1, "\(result.err)")
    #expect(result.err.hasPrefix("Error: ") && result.err.contains(text), "\(result.err)")
    #expect(!result.err.contains("account"), "a key in an error: \(result.err)")
  }

  @Test("an older record in place of the current one is reported by get and stops compact; --drop-damaged says so")
  func olderRecordIsNeverServedOrDroppedSilently() throws {
    let cask = try CaskRunner("planted-older")
    defer { cask.remove() }
    let path = try makeStore(cask)
    try plantOlderRecord(in: path)
    let get = try cask.run(["get", "s", "account"], password: Self.password)
    expectOneLineError(get, containing: "sealed for another offset")
    #expect(get.stdout.isEmpty)
    #expect(try cask.run(["get", "s", "other"], password: Self.password).out == "bystander")

    let compact = try cask.run(["compact", "s"], password: Self.password)
    expectOneLineError(compact, containing: "compaction stopped and changed nothing")
    // Still there, still reported.
    #expect(try cask.run(["get", "s", "account"], password: Self.password).status == 1)
    #expect(try cask.run(["verify", "s"], password: Self.password).status == 1)

    let salvage = try cask.run(["compact", "s", "--drop-damaged"], password: Self.password)
    #expect(salvage.status == 1, "\(salvage.err)")
    #expect(salvage.out.hasPrefix("Compacted store 's'"), "\(salvage.out)")
    #expect(
      salvage.err.contains("Left out ") && salvage.err.contains("1 damaged live record left out"), "\(salvage.err)")
    let keys = try cask.run(["keys", "s"], password: Self.password)
    #expect(keys.out == "other\n", "\(keys.out)")
  }

  @Test("a header with a 200 GiB sparse tail is refused at once by verify, get and salvage")
  func sparseHeaderIsRefused() throws {
    let cask = try CaskRunner("planted-header")
    defer { cask.remove() }
    let path = try makeStore(cask)
    #expect(truncate("\(path)/CASK", 200 << 30) == 0)
    let clock = ContinuousClock()
    for command in [["verify", "s"], ["get", "s", "other"], ["salvage", "s", cask.path("out")]] {
      let start = clock.now
      let result = try cask.run(command, password: Self.password)
      #expect(clock.now - start < .seconds(10), "\(command)")
      expectOneLineError(result, containing: "longer than the store writes")
      #expect(result.err.split(separator: "\n").count <= 2, "\(result.err)")
    }
  }

  @Test("a planted empty ffffffff.seg fails verify and is named by compact's refusal")
  func plantedLastSegmentNumberIsReported() throws {
    let cask = try CaskRunner("planted-last")
    defer { cask.remove() }
    let path = try makeStore(cask)
    #expect(FileManager.default.createFile(atPath: "\(path)/ffffffff.seg", contents: Data()))
    let verify = try cask.run(["verify", "s"], password: Self.password)
    #expect(verify.status == 1, "\(verify.out)\(verify.err)")
    #expect(verify.out.contains("ffffffff.seg"), "\(verify.out)")
    let compact = try cask.run(["compact", "s"], password: Self.password)
    #expect(compact.status == 1, "\(compact.err)")
    #expect(compact.err.contains("ffffffff.seg"), "\(compact.err)")
  }
}

extension PlantedFileCommandTests {
  @Test("cask upgrade of a store whose header was changed back to version 2 fails and deletes nothing")
  func upgradeOfADowngradedStoreDeletesNothing() throws {
    let cask = try CaskRunner("planted-downgrade")
    defer { cask.remove() }
    let path = try makeStore(cask)
    try FileDamage.setHeaderVersion(2, ofStore: path)
    let before = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
    let upgrade = try cask.run(["upgrade", "s"], password: Self.password)
    expectOneLineError(upgrade, containing: "downgraded header")
    #expect(!upgrade.err.contains("keys copied"), "\(upgrade.err)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == before)
    let put = try cask.run(["put", "s", "new"], password: Self.password, stdin: Data("v".utf8))
    expectOneLineError(put, containing: "downgraded header")
  }
}

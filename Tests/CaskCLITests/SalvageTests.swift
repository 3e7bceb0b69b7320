import CaskTestSupport
import CipherCask
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `cask salvage` and `cask export --skip-damaged` on a store damaged in several places (bytes
/// flipped in three segments, one segment cut short, no hint files): every value that still
/// reads is recovered byte for byte, what was not is listed by file and offset (never by
/// key), and the exit status is 1.
@Suite("Salvage recovers what is intact and lists the rest")
struct SalvageTests {
  let password = "salvage-pw"

  /// A store of 400 values in segments of about 8 KiB, then damaged.
  func damagedStore(_ cask: CaskRunner, formatVersion: UInt16 = CaskFormat.formatVersion) throws -> [String: Data] {
    var random = SeededRandom.make(test: "salvage store")
    let path = cask.path("s")
    var options = CaskStore.Options(durability: .never, segmentSizeLimit: 8192, autoCompaction: nil)
    options.newStoreFormatVersion = formatVersion
    let store = try CaskStore(path: path, password: password, options: options)
    var model: [String: Data] = [:]
    for index in 0..<400 {
      let key = "key-\(index)"
      model[key] = random.bytes(Int.random(in: 10...200, using: &random))
      try store.put(model[key]!, forKey: key)
    }
    try store.close()
    let segments = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".seg") }.sorted()
    #expect(segments.count > 5)
    for name in try FileManager.default.contentsOfDirectory(atPath: path) where name.hasSuffix(".hint") {
      try FileManager.default.removeItem(atPath: "\(path)/\(name)")
    }
    for name in segments[1...3] { try FileDamage.flipByte(at: 3000, in: "\(path)/\(name)") }
    try FileDamage.truncate("\(path)/\(segments[4])", to: 4000)
    return model
  }

  @Test("salvage copies every value that reads into a new store and exits 1 with the list")
  func salvage() throws {
    let cask = try CaskRunner("salvage")
    defer { cask.remove() }
    let model = try damagedStore(cask)
    let result = try cask.run(["salvage", "s", "new"], password: password)
    #expect(result.status == 1)
    let copy = try CaskStore(path: cask.path("new"), password: password, options: .init(readOnly: true))
    defer { try? copy.close() }
    let keys = try copy.keys()
    #expect(keys.count > 300 && keys.count < 400, "\(keys.count) values salvaged")
    for key in keys { #expect(try copy.get(key) == model[key], "\(key) salvaged wrong") }
    #expect(try copy.verify().damage.isEmpty)
    #expect(
      result.out == "Salvaged \(keys.count) values of store 's' into 'new'.\n"
        || result.out.hasPrefix(
          "Salvaged \(keys.count) values of store 's' into 'new'; "),
      "\(result.out)")
    let lines = result.err.split(separator: "\n")
    #expect(lines.contains { $0.hasPrefix("skipped: damaged region in ") }, "\(result.err)")
    #expect(lines.last?.hasPrefix("Error: store 's' is damaged: ") == true, "\(result.err)")
    for key in model.keys { #expect(!result.err.contains(key + " ") && !result.err.hasSuffix(key)) }
  }

  @Test("export --skip-damaged writes every value that reads, lists the rest, exits 1")
  func exportSkippingDamaged() throws {
    let cask = try CaskRunner("export-skip")
    defer { cask.remove() }
    // Version 2: a store whose open serves what is left of damaged segments, which the flag is for.
    let model = try damagedStore(cask, formatVersion: 2)
    let without = try cask.run(["export", "s", "out", "--format", "json"], password: password)
    let result = try cask.run(["export", "s", "out2", "--format", "json", "--skip-damaged"], password: password)
    #expect(result.status == 1, "\(result.err)")
    let listing =
      try JSONSerialization.jsonObject(
        with: Data(contentsOf: URL(fileURLWithPath: cask.path("out2/listing.json")))) as? [String: Any]
    let entries = try #require(listing?["entries"] as? [[String: Any]])
    #expect(entries.count > 300 && entries.count < 400)
    for entry in entries {
      let key = try #require(entry["key"] as? String)
      let file = try #require(entry["file"] as? String)
      #expect(try Data(contentsOf: URL(fileURLWithPath: cask.path("out2/\(file)"))) == model[key])
    }
    #expect(result.err.contains("\nskipped: ") || result.err.hasPrefix("skipped: "), "\(result.err)")
    // Without the flag a damaged value still fails the export, as before, and it leaves nothing.
    if without.status != 0 { #expect(!FileManager.default.fileExists(atPath: cask.path("out"))) }
  }

  @Test("Ctrl-C during salvage removes the new store, then ends the command by the signal")
  func interruptedSalvage() throws {
    let cask = try CaskRunner("salvage-interrupt")
    defer { cask.remove() }
    var random = SeededRandom.make(test: "salvage interrupt")
    let store = try CaskStore(path: cask.path("s"), password: password, options: .init(durability: .never))
    for index in 0..<2000 { try store.put(random.bytes(16 << 10), forKey: "value-\(index)") }
    try store.close()
    let pid = try cask.spawnFromShell(
      #"exec "$0" salvage "$1" "$2""#, arguments: [cask.path("s"), cask.path("new")], password: password)
    var status: Int32 = 0
    var ended = false
    for _ in 0..<60_000 {
      if waitpid(pid, &status, WNOHANG) == pid {
        ended = true
        break
      }
      if FileManager.default.fileExists(atPath: cask.path("new/CASK")) { break }
      usleep(200)
    }
    if !ended {
      kill(pid, SIGINT)
      status = CaskRunner.wait(pid)
    }
    if status == 0 {
      // It finished before the signal: then the copy is whole.
      let copy = try CaskStore(path: cask.path("new"), password: password, options: .init(readOnly: true))
      defer { try? copy.close() }
      #expect(copy.count == 2000)
    } else {
      #expect(status & 0x7f == SIGINT, "status \(status)")
      #expect(!FileManager.default.fileExists(atPath: cask.path("new")), "the new store was left behind")
    }
  }
}

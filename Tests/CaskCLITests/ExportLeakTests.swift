import CaskTestSupport
import CipherCask
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What an export's files say beyond their contents. Prevents a failed plaintext export
/// leaving the values it had written, and the files of an encrypted export, written in key
/// order, giving that order away through their inode numbers and times.
@Suite("cask export leaks nothing: no plaintext after a failure, no key order in the files")
struct ExportLeakTests {
  let password = "export-leak-pw"

  @Test("the files of an encrypted export do not give away the order of their keys (inode and mtime order)")
  func exportFileOrderDoesNotRevealKeyOrder() throws {
    let cask = try CaskRunner("export-order")
    defer { cask.remove() }
    do {
      let store = try CaskStore(path: cask.path("s"), password: password, options: .init(durability: .never))
      for index in 0..<40 {
        try store.put(Data("value \(index)".utf8), forKey: String(format: "user-%03d", index))
      }
      try store.close()
    }
    let result = try cask.run(["export", "s", "out", "--reuse-store-password"], password: password)
    #expect(result.status == 0, "\(result.err)")
    let listingData = try RNCryptor.decrypt(
      Data(contentsOf: URL(fileURLWithPath: cask.path("out/listing.rncryptor"))), password: password)
    let listing = try #require(try JSONSerialization.jsonObject(with: listingData) as? [String: Any])
    let entries = try #require(listing["entries"] as? [[String: String]])
    #expect(entries.count == 40)
    // Files in the order of their keys, and their inode numbers and modification times.
    let sorted = entries.sorted { ($0["key"] ?? "") < ($1["key"] ?? "") }
    var inodes: [UInt64] = []
    var times: [Int] = []
    for entry in sorted {
      var info = stat()
      #expect(stat(cask.path("out/\(entry["file"] ?? "")"), &info) == 0)
      inodes.append(UInt64(info.st_ino))
      times.append(Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec))
    }
    // Strictly: files written within one clock tick of the file system share an mtime, which
    // then orders nothing (the test used to fail when the whole export took one tick).
    let inodeOrderIsKeyOrder = zip(inodes, inodes.dropFirst()).allSatisfy { $0 < $1 }
    let timeOrderIsKeyOrder = zip(times, times.dropFirst()).allSatisfy { $0 < $1 }
    #expect(
      !(inodeOrderIsKeyOrder || timeOrderIsKeyOrder),
      "sorting the random-named files by inode (\(inodeOrderIsKeyOrder)) or mtime (\(timeOrderIsKeyOrder)) sorts them by key"
    )
  }

  @Test("a --format json export that fails part-way leaves no plaintext value files behind")
  func failedPlaintextExportLeavesNothing() throws {
    let cask = try CaskRunner("export-fail")
    defer { cask.remove() }
    do {
      let store = try CaskStore(path: cask.path("s"), password: password, options: .init(durability: .never))
      for key in ["k1", "k2", "k3"] { try store.put(Data("{\"secret\": \"\(key)\"}".utf8), forKey: key) }
      try store.close()
    }
    // Damage the HMAC of the last record (k3's value): k1 and k2 export, then k3 fails.
    let segment = URL(fileURLWithPath: cask.path("s/00000001.seg"))
    var bytes = try Data(contentsOf: segment)
    bytes[bytes.count - 1] ^= 1
    try bytes.write(to: segment)

    let result = try cask.run(["export", "s", "plain", "--format", "json"], password: password)
    #expect(result.status != 0)
    #expect(result.err.hasPrefix("Error: "), "\(result.err)")
    #expect(!FileManager.default.fileExists(atPath: cask.path("plain")), "the directory the export made is still there")
    // Into a new nested directory: the parents the export made go too, not only the last.
    let nested = try cask.run(["export", "s", "a/b/plain", "--format", "json"], password: password)
    #expect(nested.status == 1)
    #expect(nested.err.hasPrefix("Error: store 's' is damaged"), "\(nested.err)")
    #expect(
      !FileManager.default.fileExists(atPath: cask.path("a")),
      "left: \((try? FileManager.default.subpathsOfDirectory(atPath: cask.path("a"))) ?? [])")
    // Into a directory the user made: it stays, empty, so that the export can be made again.
    try FileManager.default.createDirectory(atPath: cask.path("mine"), withIntermediateDirectories: false)
    for format in ["json", "rncryptor"] {
      let again = try cask.run(["export", "s", "mine", "--format", format], password: password)
      #expect(again.status != 0)
      let left = try FileManager.default.contentsOfDirectory(atPath: cask.path("mine"))
      #expect(left.isEmpty, "the failed \(format) export left files \(left); its error: \(again.err)")
    }
  }

  /// Prevents a cleanup that runs for errors only, so that Ctrl-C left every plaintext value
  /// written so far.
  @Test("Ctrl-C during a --format json export leaves no plaintext value files behind")
  func interruptedPlaintextExportLeavesNothing() throws {
    let cask = try CaskRunner("export-sigint")
    defer { cask.remove() }
    do {
      let store = try CaskStore(path: cask.path("s"), password: password, options: .init(durability: .never))
      let value = Data(("{\"secret\": \"" + String(repeating: "x", count: 2000) + "\"}").utf8)
      try store.batch { batch in
        for index in 0..<20_000 { try batch.put(value, forKey: String(format: "k%06d", index)) }
      }
      try store.close()
    }
    let pid = try cask.spawnFromShell(
      "cd \"$1\" && exec \"$0\" export s plain --format json", arguments: [cask.directory.path], password: password)
    var sawFiles = false
    for _ in 0..<100_000 {
      if access(cask.path("plain/00000050.json"), F_OK) == 0 {
        sawFiles = true
        break
      }
      usleep(100)
    }
    kill(pid, SIGINT)
    let status = CaskRunner.wait(pid)
    try #require(sawFiles, "the export wrote no files in time")
    let left = (try? FileManager.default.contentsOfDirectory(atPath: cask.path("plain"))) ?? []
    let valueFiles = left.filter { $0.hasSuffix(".json") && $0 != "listing.json" }.count
    try #require(
      !left.contains("listing.json"),
      "the export finished before the signal (status \(status))")
    #expect(valueFiles == 0, "an interrupted plaintext export left \(valueFiles) plaintext value files")
  }
}

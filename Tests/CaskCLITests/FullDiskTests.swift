import CaskTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Commands on a disk that fills up: a write that reached the disk is reported as done, and
/// what failed after it (the hint and the manifest written at close) as a warning that names it; a long command that
/// stops on a full disk says how much it kept. The disk is a small tmpfs mounted by the test
/// on a directory it made, and unmounted after it.
@Suite(
  "Commands on a full disk tell what was written",
  .enabled(if: SmallDisk.isAvailable, "needs root to mount a small tmpfs (mount -t tmpfs)"))
struct FullDiskTests {
  let password = "full-disk-pw"

  @Test("put that fits but whose hint and manifest do not exits 0 with a warning naming the file that failed")
  func putWhoseHintDoesNotFit() throws {
    let cask = try CaskRunner("full-disk-put")
    defer { cask.remove() }
    let disk = try SmallDisk(cask.path("disk"), size: 256 * 1024)
    defer { disk.unmount() }
    let store = "disk/s"
    _ = try cask.createStore(store, password: password)
    #expect(try cask.run(["put", store, "a"], password: password, stdin: Data("first".utf8)).status == 0)
    // One page left: the value's record takes it, so what close writes after it (the
    // segment's new hint, the manifest that lists its new length) finds no room. The warning
    // names the last of them that failed, as its cause does.
    try disk.fill(leavingPages: 1)
    let value = Data((0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    try value.write(to: URL(fileURLWithPath: cask.path("value")))
    let put = try cask.run(["put", store, "k", "--file", "value"], password: password)
    #expect(put.status == 0, "\(put.err)")
    let prefix = "warning: store 'disk/s': "
    if put.err.contains("MANIFEST") {
      #expect(put.err.hasPrefix(prefix + "the manifest could not be written"), "\(put.err)")
    } else {
      #expect(put.err.contains(".hint") && put.err.hasPrefix(prefix + "a hint file could not be written"))
    }
    #expect(put.err.contains("No space left on device") && put.err.contains("nothing was lost"))
    #expect(put.err.split(separator: "\n").count == 1)
    let get = try cask.run(["get", store, "k"], password: password)
    #expect(get.status == 0, "\(get.err)")
    #expect(get.stdout == value)
  }
}

extension FullDiskTests {
  @Test("import that fills the disk says how many objects it kept and through which line")
  func importOnFullDisk() throws {
    let cask = try CaskRunner("full-disk-import")
    defer { cask.remove() }
    let disk = try SmallDisk(cask.path("disk"), size: 512 * 1024)
    defer { disk.unmount() }
    _ = try cask.createStore("disk/s", password: password)
    let lines = (0..<5000).map { #"{"id": \#($0), "pad": "\#(String(repeating: "x", count: 100))"}"# }
    try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: cask.path("in.jsonl")))
    let result = try cask.run(
      ["import", "disk/s", "in.jsonl", "--collection", "c", "--id-key", "id", "--batch-size", "500"],
      password: password)
    #expect(result.status == 1)
    let keys = try cask.run(["keys", "disk/s", "--collection", "c"], password: password)
    let kept = keys.out.split(separator: "\n").count
    #expect(kept > 0 && kept < 5000 && kept % 500 == 0, "\(kept) objects")
    #expect(result.err.contains("No space left on device"), "\(result.err)")
    #expect(
      result.err.hasSuffix(
        "; \(kept) objects were imported, through line \(kept) of 'in.jsonl'; nothing after that line was written\n"),
      "\(result.err)")
  }
}

/// A tmpfs of a few pages, mounted on a directory the test made.
struct SmallDisk {
  let path: String

  /// Whether this process may mount one (it runs as root and `mount` works).
  static let isAvailable: Bool = {
    guard geteuid() == 0, let directory = try? TemporaryDirectory("tmpfs-probe") else { return false }
    defer { directory.remove() }
    let probe = directory.file("m")
    guard (try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: false)) != nil,
      run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe])
    else { return false }
    _ = run(["umount", probe])
    return true
  }()

  /// Makes `path` and mounts a tmpfs of `size` bytes on it.
  init(_ path: String, size: Int) throws {
    self.path = path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    guard Self.run(["mount", "-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path]) else {
      throw CocoaError(.fileWriteUnknown)
    }
  }

  /// Writes a file of zeros until the disk has no page left, then gives `leavingPages` pages
  /// back by cutting the file.
  func fill(leavingPages: Int = 0) throws {
    let descriptor = open("\(path)/filler", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
    defer { close(descriptor) }
    let page = [UInt8](repeating: 0, count: 4096)
    while page.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    while write(descriptor, page, 1) > 0 {}
    guard leavingPages > 0 else { return }
    let size = lseek(descriptor, 0, SEEK_END)
    guard size >= 4096 * leavingPages, ftruncate(descriptor, size - off_t(4096 * leavingPages)) == 0 else {
      throw CocoaError(.fileWriteUnknown)
    }
  }

  /// Removes the filler file, which frees the disk again.
  func empty() {
    unlink("\(path)/filler")
  }

  func unmount() {
    _ = Self.run(["umount", "-l", path])
  }

  @discardableResult
  static func run(_ command: [String]) -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = command
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return false }
    process.waitUntilExit()
    return process.terminationStatus == 0
  }
}

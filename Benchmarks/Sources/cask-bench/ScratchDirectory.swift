import Foundation

#if canImport(CLinuxSystem)
  import CLinuxSystem
#endif

/// A fresh directory for a benchmark's stores (`mkdtemp`), removed with everything in it
/// when the run ends.
struct ScratchDirectory {
  let path: String

  /// Creates `<base>/cask-bench.XXXXXX`.
  init(in base: String) throws {
    var template = Array("\(base)/cask-bench.XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
      guard let pointer = buffer.baseAddress, mkdtemp(pointer) != nil else { return nil }
      return String(cString: pointer)
    }
    guard let made else {
      throw BenchError("cannot create a directory in '\(base)': \(String(cString: strerror(errno)))")
    }
    path = made
  }

  func remove() {
    try? FileManager.default.removeItem(atPath: path)
  }

  /// The kind of file system `path` is on (`statfs`), for example `ext4`: durable-write
  /// figures mean nothing on tmpfs, and differ between file systems.
  static func fileSystemName(of path: String) -> String {
    #if canImport(CLinuxSystem)
      var info = statfs()
      guard statfs(path, &info) == 0 else { return "unknown file system" }
      let names: [UInt: String] = [
        0xEF53: "ext2/3/4", 0x5846_5342: "xfs", 0x9123_683E: "btrfs", 0x0102_1994: "tmpfs",
        0x794C_7630: "overlayfs", 0x6969: "nfs", 0x6573_5546: "fuse", 0x2FC1_2FC1: "zfs",
      ]
      let magic = UInt(truncatingIfNeeded: info.f_type)
      return names[magic] ?? "file system 0x\(String(magic, radix: 16))"
    #else
      return "unknown file system"
    #endif
  }
}

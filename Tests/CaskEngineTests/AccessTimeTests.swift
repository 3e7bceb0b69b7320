import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// Reading a store leaves its files' access times alone where the system allows (the owner
/// opens with `O_NOATIME`): who can list the directory does not learn when it was read.
@Suite struct AccessTimeTests {
  /// Sets the access and modification times of `path` to three days ago, so that a read
  /// under `relatime` would move the access time.
  private func age(_ path: String) throws {
    let old = timespec(tv_sec: time(nil) - 3 * 86_400, tv_nsec: 0)
    var times = [old, old]
    guard utimensat(AT_FDCWD, path, &times, 0) == 0 else {
      throw CaskError.io(operation: "utimensat", path: path, errno: errno)
    }
  }

  private func accessTime(_ path: String) throws -> Int {
    var info = stat()
    guard stat(path, &info) == 0 else { throw CaskError.io(operation: "stat", path: path, errno: errno) }
    return info.st_atim.tv_sec
  }

  @Test func readingAStoreKeepsItsFilesAccessTimes() throws {
    try withTemporaryDirectory("access-time") { directory in
      let path = directory.file("store.cask")
      let store = try CaskStore(path: path, password: testPassword, options: testStoreOptions)
      try store.put(Data("value".utf8), forKey: "key")
      try store.close()
      let files = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0 != CaskFormat.lockFileName }
      try #require(files.contains { $0.hasSuffix(".seg") })
      // The check can fail: a plain read of an aged file here moves its access time.
      let control = directory.file("control")
      try Data("control".utf8).write(to: URL(fileURLWithPath: control))
      try age(control)
      let before = try accessTime(control)
      _ = try Data(contentsOf: URL(fileURLWithPath: control))
      try #require(try accessTime(control) != before, "this file system does not record access times")

      for name in files { try age("\(path)/\(name)") }
      let times = try files.map { try accessTime("\(path)/\($0)") }
      var readOnly = testStoreOptions
      readOnly.readOnly = true
      let reader = try CaskStore(path: path, password: testPassword, options: readOnly)
      #expect(try reader.get("key") == Data("value".utf8))
      #expect(try reader.verify().isClean)
      try reader.close()
      #expect(try files.map { try accessTime("\(path)/\($0)") } == times, "\(files)")
    }
  }
}

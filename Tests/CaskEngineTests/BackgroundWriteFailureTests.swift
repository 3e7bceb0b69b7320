import CaskTestSupport
import Foundation
import Testing

@testable import CaskEngine

#if canImport(Glibc)
  import Glibc
#endif

/// A hint file or a manifest that cannot be written (a full disk at close) costs no data: the
/// writes before it are durable, so `close()` does not throw; `backgroundWriteFailure` says
/// what failed, and the next open scans the segment, or reads the manifest before, instead.
@Suite("A hint or manifest that cannot be written")
struct BackgroundWriteFailureTests {
  @Test(
    "close() returns after a failed hint or manifest write, reports it, and the value reads after reopen",
    arguments: [".hint", CaskFormat.manifestFileName])
  func closeAfterFailedBackgroundWrite(file: String) throws {
    let fileSystem = FaultyFileSystem(directories: [FaultWorkload.directory])
    let options = FaultWorkload.options(fileSystem)
    let store = try FaultWorkload.open(options)
    try store.put(Data("kept".utf8), forKey: "k")
    fileSystem.inject(.init([.write], errno: ENOSPC, paths: { $0.contains(file) }))
    #expect(throws: Never.self) { try store.close() }
    let failure = try #require(store.backgroundWriteFailure)
    guard case .io(_, let path, let code) = failure else {
      Issue.record("expected an I/O failure, got \(failure)")
      return
    }
    #expect(code == ENOSPC)
    #expect(path.contains(file), "\(path)")
    fileSystem.clearFaults()
    let reopened = try FaultWorkload.open(options)
    #expect(try reopened.get("k") == Data("kept".utf8))
    #expect(reopened.backgroundWriteFailure == nil)
    try reopened.close()
  }
}

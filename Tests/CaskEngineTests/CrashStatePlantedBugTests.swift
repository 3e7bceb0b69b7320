import CaskEngine
import CaskTestSupport
import Foundation
import Testing

/// The crash-state enumerator can fail: with a bug planted between the store and the
/// recorder (a directory sync that does nothing, a file sync that does nothing), it reports
/// violations on a workload it passes without the bug.
@Suite("Crash states: planted bugs")
struct CrashStatePlantedBugTests {
  /// A file system whose `syncDirectory` returns without syncing: a missing directory sync
  /// after a segment's creation or rename.
  final class NoDirectorySync: ForwardingFileSystem, @unchecked Sendable {
    override func syncDirectory(_ path: String) throws {}
  }

  /// A file system whose files' `sync` returns without syncing.
  final class NoFileSync: ForwardingFileSystem, @unchecked Sendable {
    override func open(_ path: String, mode: FileOpenMode) throws -> any StorageFile {
      UnsyncedFile(try base.open(path, mode: mode))
    }
  }

  final class UnsyncedFile: StorageFile, @unchecked Sendable {
    let base: any StorageFile
    init(_ base: any StorageFile) { self.base = base }
    var path: String { base.path }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
      try base.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws { try base.write(bytes, at: offset) }
    func writeMapped(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Bool { base.writeMapped(bytes, at: offset) }
    func sync() throws {}
    func size() throws -> UInt64 { try base.size() }
    func truncate(to length: UInt64) throws { try base.truncate(to: length) }
    func close() { base.close() }
  }

  static var workload: CrashStateWorkload {
    CrashStateWorkload(
      "create, put (planted bug)", steps: [.open, .put("x", "1"), .put("y", "2")])
  }

  @Test("without the planted bug the workload has no violation")
  func cleanBaseline() throws {
    for report in try CrashStateRunner(bounds: .standard).run(Self.workload, models: [.posixMinimum]) {
      print(report)
      #expect(report.violationCount == 0, "\(report.violations)")
    }
  }

  @Test("a directory sync that does nothing is caught under the POSIX minimum")
  func missingDirectorySync() throws {
    let reports = try CrashStateRunner(bounds: .standard).run(Self.workload, models: [.posixMinimum]) {
      NoDirectorySync($0)
    }
    for report in reports {
      print(report)
      print("[crash-states] planted bug caught, e.g. \(report.violations.prefix(2))")
      #expect(report.violationCount > 0, "the enumerator missed a store whose directory is never synced")
    }
  }

  @Test("under .never, a sync() that does not sync is caught: a write it acknowledged lost, a later one kept")
  func unsyncedNeverWrites() throws {
    var options = CrashStateWorkload.defaultOptions
    options.durability = .never
    // Two writes before the sync and two after it: without the file sync, a crash after the
    // sync can keep a later write and lose an earlier one.
    let workload = CrashStateWorkload(
      ".never and sync() (planted bug)", options: options,
      steps: [
        .open, .put("x", "x1", durable: false), .put("y", "y1", durable: false), .sync,
        .put("z", "z1", durable: false),
      ])
    var runner = CrashStateRunner(bounds: .standard)
    runner.describedViolations = .max
    for report in try runner.run(workload, models: [.posixMinimum], wrap: { NoFileSync($0) }) {
      print(report)
      #expect(
        report.violations.contains { $0.contains("out of order past a sync") },
        "the enumerator missed a write acknowledged by sync() lost behind a later one: \(report.violations)")
    }
  }

  @Test("a file sync that does nothing is caught under both models")
  func missingFileSync() throws {
    let reports = try CrashStateRunner(bounds: .standard).run(Self.workload) { NoFileSync($0) }
    for report in reports {
      print(report)
      #expect(report.violationCount > 0, "\(report.model): the enumerator missed acknowledged writes never synced")
    }
  }
}

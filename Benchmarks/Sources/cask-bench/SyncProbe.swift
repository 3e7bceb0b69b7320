import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The disk's own durable-write rate, measured in the same run as the durable puts it bounds:
/// appends of one record's bytes to a fresh file in the stores' directory, each followed by
/// `fdatasync`, as a store with `.always` does for each commit (or group of commits).
enum SyncProbe {
  /// Times `writes` appends of `recordBytes` bytes, each with its `fdatasync`.
  static func measure(directory: String, writes: Int, recordBytes: Int) throws -> EngineCommand.RunFigure {
    let path = "\(directory)/sync-probe"
    let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL, 0o600)
    guard descriptor >= 0 else { throw BenchError("cannot create '\(path)': \(String(cString: strerror(errno)))") }
    defer {
      close(descriptor)
      unlink(path)
    }
    let record = [UInt8](repeating: 0xA5, count: recordBytes)
    var offset: off_t = 0
    return try EngineCommand.timed(writes) { _ in
      let written = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, offset) }
      guard written == recordBytes, fdatasync(descriptor) == 0 else {
        throw BenchError("cannot append to '\(path)': \(String(cString: strerror(errno)))")
      }
      offset += off_t(recordBytes)
    }.figure
  }
}

import CaskCLIKit
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The file calls of an export: new files created exclusively (mode 0600) and written without
/// syncing, as `cp` does. (Foundation's `Data.write(to:)` syncs every file, which makes an
/// export of many small values wait on the disk once per value: minutes for 100,000 values.)
/// An export interrupted by a crash is simply made again.
enum ExportFile {
  /// Creates `path`, which must not exist, and writes `data` to it.
  ///
  /// - Throws: `CLIError.failure` naming the file and the system's reason.
  static func create(_ path: String, contents data: Data) throws {
    let descriptor = retrying { open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) }
    guard descriptor >= 0 else { throw failure("create", path) }
    defer { close(descriptor) }
    do {
      try data.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
          let written = retrying { write(descriptor, buffer.baseAddress! + offset, buffer.count - offset) }
          guard written > 0 else { throw failure("write", path) }
          offset += written
        }
      }
    } catch {
      // The file is this call's own (O_EXCL): a part of it is no use to anyone.
      unlink(path)
      throw error
    }
  }

  private static func retrying<R: BinaryInteger>(_ call: () -> R) -> R {
    while true {
      let result = call()
      if result >= 0 || errno != EINTR { return result }
    }
  }

  private static func failure(_ operation: String, _ path: String) -> CLIError {
    CLIError.failure("cannot \(operation) '\(path)': \(String(cString: strerror(errno)))")
  }
}

import CaskCLIKit
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Warnings about files that hold a secret (a password file, a header file) but that other
/// users may read.
enum FileExposure {
  /// The permission bits of `path` that let its group or others read it, or 0 (also when
  /// `path` cannot be examined: reading it then fails with its own message).
  static func sharedReadBits(_ path: String) -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { return 0 }
    return info.st_mode & (S_IRGRP | S_IROTH)
  }

  /// Writes `warning: <what> 'P' can be read by its group and others (mode 0644): chmod 600 it`
  /// to standard error when it can.
  static func warnIfShared(_ path: String, what: String) {
    let shared = sharedReadBits(path)
    guard shared != 0 else { return }
    var info = stat()
    _ = stat(path, &info)
    let readers = shared == (S_IRGRP | S_IROTH) ? "its group and others" : shared == S_IRGRP ? "its group" : "others"
    let mode = String(info.st_mode & 0o7777, radix: 8)
    StandardStream.error.write(
      "warning: \(what) \(MessageText.quoted(path)) can be read by \(readers) (mode \(String(repeating: "0", count: max(0, 4 - mode.count)) + mode)): "
        + "chmod 600 it\n")
  }
}

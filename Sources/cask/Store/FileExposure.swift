import CaskCLIKit
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Warnings about files that hold a secret (a password file, a header file) but that other
/// users may read.
enum FileExposure {
  /// Writes `warning: <what> 'P' can be read by its group and others (mode 0644): chmod 600 it`
  /// to standard error when its group or others may read it. Nothing when `path` cannot be
  /// examined (reading it then fails with its own message), or is neither a regular file nor a
  /// FIFO.
  static func warnIfShared(_ path: String, what: String) {
    var info = stat()
    guard stat(path, &info) == 0 else { return }
    // Only what holds the secret itself: a file, or a FIFO another user could read from first.
    // Prevents: telling the user to chmod a terminal, /dev/stdin or a directory.
    let kind = info.st_mode & S_IFMT
    guard kind == S_IFREG || kind == S_IFIFO else { return }
    let shared = info.st_mode & (S_IRGRP | S_IROTH)
    guard shared != 0 else { return }
    let readers = shared == (S_IRGRP | S_IROTH) ? "its group and others" : shared == S_IRGRP ? "its group" : "others"
    let digits = String(info.st_mode & 0o7777, radix: 8)
    let mode = String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    StandardStream.error.write(
      "warning: \(what) \(MessageText.quoted(path)) can be read by \(readers) (mode \(mode)): chmod 600 it\n")
  }
}

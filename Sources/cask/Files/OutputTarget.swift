import CaskCLIKit
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Where a command that writes one output file (`encrypt`, `decrypt`) puts it.
///
/// Prevents: `--force` replacing a symbolic link (and, as root, a system link such as
/// `/dev/stdout`) with a new file. A link to a regular file is written through (the file it
/// names is replaced); a device, a pipe, `-` and the names of standard output are written as a
/// stream, in place; anything else is refused.
enum OutputTarget: Equatable {
  /// A regular file, made or replaced by a rename: `path` is OUT, or the file a link names.
  case file(path: String, exists: Bool)
  /// Written in order, never renamed: standard output when `path` is nil.
  case stream(path: String?)

  /// The names that mean standard output.
  private static let standardOutputNames: Set<String> = ["-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]

  /// What `output` (OUT as typed) names. Fails with a one-line message for a directory and a
  /// link to nothing; an existing file is left to the caller's `--force` check.
  static func resolve(_ output: String) throws -> OutputTarget {
    if standardOutputNames.contains(output) { return .stream(path: nil) }
    var status = stat()
    guard lstat(output, &status) == 0 else { return .file(path: output, exists: false) }
    // The kernel's own files: written in place whatever they point at, never replaced.
    if output.hasPrefix("/dev/") || output.hasPrefix("/proc/") {
      guard !isDirectory(status) else { throw CLIError.failure("'\(output)' is a directory") }
      return .stream(path: output)
    }
    guard (status.st_mode & S_IFMT) == S_IFLNK else { return try kind(status, output, path: output) }
    var target = stat()
    guard stat(output, &target) == 0, let resolved = realpath(output, nil) else {
      throw CLIError.failure(
        "'\(output)' is a symbolic link to nothing: give the path of the file to write, not the link")
    }
    defer { free(resolved) }
    return try kind(target, output, path: String(cString: resolved))
  }

  private static func kind(_ status: stat, _ output: String, path: String) throws -> OutputTarget {
    switch status.st_mode & S_IFMT {
    case S_IFREG: return .file(path: path, exists: true)
    case S_IFDIR: throw CLIError.failure("'\(output)' is a directory")
    case S_IFCHR, S_IFIFO, S_IFSOCK: return .stream(path: output)
    default: throw CLIError.failure("'\(output)' is not a regular file, a device or a pipe")
    }
  }

  private static func isDirectory(_ status: stat) -> Bool { (status.st_mode & S_IFMT) == S_IFDIR }
}

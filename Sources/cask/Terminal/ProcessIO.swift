import Foundation

/// How many bytes this process has read so far, from `/proc/self/io` (`rchar`).
///
/// The library calls behind `encrypt`, `decrypt`, `verify` and `compact` take no progress
/// callback; this counter measures how far they have read instead. `nil` where the kernel
/// does not provide it (the bar then shows no percentage).
enum ProcessIO {
  static func bytesRead() -> UInt64? {
    guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("rchar:") {
      return UInt64(line.dropFirst("rchar:".count).trimmingCharacters(in: .whitespaces))
    }
    return nil
  }

  /// A bar for library work that reads about `total` bytes, measured by `bytesRead()`.
  static func progressBar(_ label: String, total: UInt64) -> ProgressBar? {
    guard let start = bytesRead() else { return ProgressBar.start(label, total: nil, unit: .time) { 0 } }
    return ProgressBar.start(label, total: total) { (bytesRead() ?? start) - start }
  }
}

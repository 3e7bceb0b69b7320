import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Ctrl-C, `kill` and a closed terminal during `encrypt` and `decrypt`.
///
/// The library writes OUT's bytes to `.<name>.<random>.partial` beside OUT and renames it at
/// the end; a process killed by a signal would leave that file (for `decrypt`, plaintext that
/// has not been authenticated) behind. While `body` runs, SIGINT, SIGTERM and SIGHUP are
/// blocked and taken by a thread that removes the temporary files that appeared since, then
/// ends the process by the same signal, as it would have ended without this.
enum Interruption {
  static let signals = [SIGINT, SIGTERM, SIGHUP]

  static func removingPartialFiles<R>(of output: String, _ body: () throws -> R) rethrows -> R {
    let directory = (output as NSString).deletingLastPathComponent
    let name = (output as NSString).lastPathComponent
    let folder = directory.isEmpty ? "." : directory
    let existing = Set(partialFiles(in: folder, of: name))
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal) }
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &set, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    let blocked = set
    let watcher = Thread {
      var waiting = blocked
      var received: Int32 = 0
      guard sigwait(&waiting, &received) == 0 else { return }
      for file in partialFiles(in: folder, of: name) where !existing.contains(file) {
        unlink("\(folder)/\(file)")
      }
      signal(received, SIG_DFL)
      var only = sigset_t()
      sigemptyset(&only)
      sigaddset(&only, received)
      pthread_sigmask(SIG_UNBLOCK, &only, nil)
      raise(received)
    }
    watcher.start()
    return try body()
  }

  /// The names of the library's temporary files for OUT `name` in `folder`.
  private static func partialFiles(in folder: String, of name: String) -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
    return names.filter { $0.hasPrefix(".\(name).") && $0.hasSuffix(".partial") }
  }
}

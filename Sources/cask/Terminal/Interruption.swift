import CaskPlatform
import CipherCask
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Ctrl-C, `kill` and a closed terminal during `encrypt`, `decrypt`, `export`, `backup` and
/// `rekey`.
///
/// The library writes OUT's bytes to `.<name>.<random>.partial` beside OUT and renames it at
/// the end; a process killed by a signal would leave that file (for `decrypt`, plaintext that
/// has not been authenticated) behind. While `body` runs, the signals that would end the
/// process (Ctrl-C, `kill`, a closed terminal, Ctrl-\\, a user signal, an alarm, a broken pipe,
/// a CPU or file size limit) are blocked and taken by a thread that removes the temporary
/// files this process has open, then ends the process by the same signal, as it would have
/// ended without this. A signal the caller ignores (`nohup`, a background job of a script)
/// stays ignored. (SIGQUIT is taken from the Swift runtime's backtracer, whose handler would
/// otherwise end the process without the cleanup.)
enum Interruption {
  static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGXCPU, SIGXFSZ]

  static func removingPartialFiles<R>(of output: String, _ body: () throws -> R) rethrows -> R {
    let directory = FilePath.directory(of: output)
    let name = (output as NSString).lastPathComponent
    let folder = directory.isEmpty ? "." : directory
    return try cleaningUp({ for file in openPartialFiles(in: folder, of: name) { unlink(file) } }, body)
  }

  /// Runs `body`, a copy that asks `shouldContinue` as it goes and removes what it wrote when
  /// that turns `false` (`CaskStore.backup`, `rekeyedCopy`). Should one of `signals` come,
  /// `shouldContinue` turns `false` and, once `body` has returned (its files removed, or the
  /// copy complete if the signal came after its last question), the process ends by that
  /// signal. The thread that ran `body` goes no further: it prints nothing and does not exit
  /// with a status of its own. A Ctrl-C (or Ctrl-\\) while `body` stops ends the process at
  /// once, leaving what `body` has not removed yet.
  static func stoppingOnSignal<R>(_ body: (_ shouldContinue: () -> Bool) throws -> R) rethrows -> R {
    let stop = StopRequest()
    let cleanup: @Sendable () -> Void = { stop.requestAndWaitForBody() }
    return try cleaningUp(cleanup) {
      defer { stop.bodyReturned() }
      return try body { !stop.isRequested }
    }
  }

  /// `signals` as a set.
  private static var signalSet: sigset_t {
    var set = sigset_t()
    sigemptyset(&set)
    for signal in signals { sigaddset(&set, signal) }
    return set
  }

  /// Takes (and drops) every one of `signals` that is pending now, without waiting.
  static func takePendingSignals() {
    var set = signalSet
    var none = timespec(tv_sec: 0, tv_nsec: 0)
    while sigtimedwait(&set, nil, &none) > 0 {}
  }

  /// Whether Ctrl-C (SIGINT) or Ctrl-\\ (SIGQUIT) is pending (blocked, and not yet taken).
  static func keyboardSignalIsPending() -> Bool {
    var pending = sigset_t()
    guard sigpending(&pending) == 0 else { return false }
    return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGQUIT) == 1
  }

  /// Blocks `signals` in the calling thread (a helper thread's first step), so that the
  /// process's signal goes to a thread that takes it.
  static func blockInThisThread() {
    var set = signalSet
    pthread_sigmask(SIG_BLOCK, &set, nil)
  }

  /// Runs `body`; should one of `signals` come meanwhile, runs `cleanup` on a thread of its
  /// own (while `body` goes on, unless `cleanup` stops it, for example by taking a lock that
  /// `body` needs) and then ends the process by that signal.
  static func cleaningUp<R>(_ cleanup: @escaping @Sendable () -> Void, _ body: () throws -> R) rethrows -> R {
    var set = sigset_t()
    sigemptyset(&set)
    var taken = 0
    for signal in signals {
      var current = sigaction()
      guard sigaction(signal, nil, &current) == 0, !isIgnore(current.__sigaction_handler.sa_handler) else { continue }
      sigaddset(&set, signal)
      taken += 1
    }
    guard taken > 0 else { return try body() }
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &set, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    let blocked = set
    let watcher = Thread {
      var waiting = blocked
      var received: Int32 = 0
      guard sigwait(&waiting, &received) == 0 else { return }
      cleanup()
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

  private static func isIgnore(_ handler: __sighandler_t?) -> Bool {
    guard let handler else { return false }
    return unsafeBitCast(handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
  }

  /// The library's temporary files for OUT `name` in `folder` that this process has open (so
  /// its own, not another run's): `.<name, perhaps cut>.<random>.partial`, as absolute paths.
  private static func openPartialFiles(in folder: String, of name: String) -> [String] {
    guard let resolved = realpath(folder, nil) else { return [] }
    let directory = String(cString: resolved)
    free(resolved)
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.compactMap { descriptor -> String? in
      guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)"),
        FilePath.directory(of: target) == directory
      else { return nil }
      let file = (target as NSString).lastPathComponent
      guard file.hasPrefix("."), file.hasSuffix(".partial") else { return nil }
      // `.<cut name>.<random>`: the cut name is a prefix of `name` (RNCryptor+Files).
      let stem = file.dropFirst().dropLast(".partial".count)
      guard let dot = stem.lastIndex(of: "."), name.utf8.starts(with: stem[..<dot].utf8) else { return nil }
      return target
    }
  }
}

/// A stop asked for by a signal, and the moment the work it stops has returned.
private final class StopRequest: Sendable {
  private let requested = Atomic(false)
  private let returned = DispatchSemaphore(value: 0)

  var isRequested: Bool { requested.load(ordering: .acquiring) }

  /// On the signal's thread: asks the work to stop, and waits until it has returned, or
  /// until the user presses Ctrl-C (or Ctrl-\\) again (a copy stuck in I/O can still be ended
  /// at once, as before). Signals already pending are taken first and do not count: a closed
  /// terminal sends SIGHUP more than once, and a service manager SIGTERM then SIGHUP.
  func requestAndWaitForBody() {
    requested.store(true, ordering: .releasing)
    Interruption.takePendingSignals()
    while returned.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
      if Interruption.keyboardSignalIsPending() { return }
    }
  }

  /// On the work's thread, when it returns or throws. Stopped by a signal, the thread waits
  /// here for the process to end by it.
  func bodyReturned() {
    returned.signal()
    guard isRequested else { return }
    while true { sleep(60) }
  }
}

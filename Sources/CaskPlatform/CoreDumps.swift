internal import CProcessControl

#if canImport(Glibc)
  import Glibc
#endif

/// Keeps a process's memory out of core files and away from debuggers of the same user.
///
/// A crash of a process that holds a password or a data key would write them to a core file
/// (or hand them to a crash collector such as systemd-coredump), where they outlive the
/// process. `RLIMIT_CORE` 0 stops the core file; `PR_SET_DUMPABLE` 0 stops piped crash
/// handlers too, and also keeps other processes of the same user from attaching with
/// `ptrace` or reading `/proc/PID/mem` and `/proc/PID/environ` (those files then belong to
/// root).
package enum CoreDumps {
  /// Turns both off for the calling process (and what it starts, which inherits the limit).
  ///
  /// - Returns: the calls that failed, with their `errno`; empty when both held.
  @discardableResult
  package static func disable() -> [(call: String, code: Int32)] {
    var failures: [(call: String, code: Int32)] = []
    var none = rlimit(rlim_cur: 0, rlim_max: 0)
    if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) != 0 {
      failures.append(("setrlimit(RLIMIT_CORE)", errno))
    }
    if cask_process_set_undumpable() != 0 { failures.append(("prctl(PR_SET_DUMPABLE)", errno)) }
    return failures
  }

  /// Whether the calling process may still be dumped (`PR_GET_DUMPABLE`).
  package static var isDumpable: Bool { cask_process_dumpable() != 0 }
}
